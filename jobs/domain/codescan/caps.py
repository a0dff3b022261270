"""How many findings a stored report lists: a generated or vendored file can yield tens of
thousands (50,000 made a 22 MB page), and the hundredth finding of one rule tells a reader
nothing the first did not.

`cap_findings` keeps at most FINDINGS_PER_RULE of each rule and FINDINGS_PER_SCAN in all and
says how many of each rule it left out. The counts, the scorecard and the verdicts were
computed over every finding before, so they do not change.
"""

from collections import Counter, defaultdict
from dataclasses import replace

from jobs.domain.codescan.model import SEVERITY_RANK, ScanReport

FINDINGS_PER_RULE = 200
FINDINGS_PER_SCAN = 2_000


def cap_findings(
    report: ScanReport,
    *,
    per_rule: int = FINDINGS_PER_RULE,
    per_scan: int = FINDINGS_PER_SCAN,
) -> ScanReport:
    """The report listing at most `per_rule` findings of a rule and `per_scan` in all.

    Which ones stay: within a rule the most severe, then the first in file order; across
    rules the most severe, then round-robin (every rule's first, then every rule's second...)
    so one noisy rule cannot crowd the others out. The kept ones stay in file order.
    """
    findings = report.findings
    by_rule: dict[str, list[int]] = defaultdict(list)
    for index, finding in enumerate(findings):
        by_rule[finding.rule_id].append(index)
    ranked = []  # (severity, place within its rule, index): the sort decides who stays
    for indexes in by_rule.values():
        indexes.sort(key=lambda index: -SEVERITY_RANK[findings[index].severity])
        for place, index in enumerate(indexes[:per_rule]):
            ranked.append((-SEVERITY_RANK[findings[index].severity], place, index))
    kept = sorted(index for *_, index in sorted(ranked)[:per_scan])
    listed = Counter(findings[index].rule_id for index in kept)
    dropped = Counter(report.findings_dropped_by_rule)
    for rule_id, indexes in by_rule.items():
        dropped[rule_id] += len(indexes) - listed[rule_id]
    return replace(
        report,
        findings=[findings[index] for index in kept],
        findings_total=report.findings_total or len(findings),
        findings_dropped_by_rule={rule: n for rule, n in sorted(dropped.items()) if n},
        findings_cap={"per_rule": per_rule, "per_scan": per_scan},
    )
