"""What a scan hands back: findings, skipped paths, the scorecard and a verdict per target.

Every type here is a dataclass of plain values, so `dataclasses.asdict(report)` is JSON.
"""

from dataclasses import dataclass, field

from advisor.domain.portability.rules import INFO, RE_TUNE, REWRITE_RISK

# Higher wins when two findings of one rule land on one line.
SEVERITY_RANK = {INFO: 0, RE_TUNE: 1, REWRITE_RISK: 2}

CATEGORIES = ("TC", "PREC", "COMM", "MEM", "WARP", "ASM", "ARCH", "DEV", "DEP", "TOOL")


@dataclass(frozen=True, slots=True)
class Finding:
    """One locked assumption (or portable-intent API) at one place in the scanned code."""

    rule_id: str
    category: str
    severity: str
    file: str  # relative to the scanned root, posix separators
    line: int  # 1-based
    column: int  # 1-based, in characters
    code: str  # the source line, stripped, at most 300 characters
    reason: str
    alternative: str
    context: str = ""  # why the severity differs from the rule's default, when it does
    # The lines around `line` as in the file (text.SNIPPET_CONTEXT_LINES either side, joined
    # with newlines), the first of them numbered snippet_start_line.
    snippet_start_line: int = 0
    snippet: str = ""
    # Stable across scans of the same code (fingerprints.py): what a dismissal is keyed by.
    fingerprint: str = ""


@dataclass(frozen=True, slots=True)
class Skipped:
    """A path the scan did not read, or read and left out of the verdicts, and why."""

    path: str
    reason: str


@dataclass
class ScanReport:
    findings: list[Finding]
    # Four rows in the catalogue's order: {question_id, question, answer, evidence}
    # (advisor.domain.portability.scorecard).
    scorecard: list[dict]
    # Target name -> {verdict: "re-tune" | "rewrite", deciding: ["RULE file:line", ...]}.
    verdicts: dict[str, dict]
    # {"severity": {severity: n}, "category": {category: n}}, every key present.
    counts: dict[str, dict[str, int]]
    skipped: list[Skipped] = field(default_factory=list)
    files_scanned: int = 0
    bytes_scanned: int = 0
    languages: dict[str, int] = field(default_factory=dict)  # language -> files scanned
    # Archive or folder members of a type the scanner does not read (docs, data, images):
    # counted, not listed, since a repository holds thousands. Uploaded files are listed.
    files_ignored: int = 0
    # Findings found in all. `findings` may hold fewer (caps.cap_findings): counts, scorecard
    # and verdicts are always over all of them.
    findings_total: int = 0
    # False when the scan stopped counting at ScanLimits.max_findings: every count is "at least".
    counts_complete: bool = True
    findings_dropped_by_rule: dict[str, int] = field(default_factory=dict)  # rule -> not listed
    findings_cap: dict[str, int] = field(default_factory=dict)  # {"per_rule": n, "per_scan": n}
