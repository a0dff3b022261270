"""Second pass: candidates become findings once the whole upload is known.

Repo-wide facts decide some candidates (the repo's own `ncclCheck` is not NCCL; its own
package is not a dependency; a mask named FULL_MASK is 0xffffffff only if the repo says so;
CUDAExtension is hipified unless the repo's CUDA holds PTX). Then declared abstraction
layers turn rewrite-risk into re-tune, and one rule reports one line once (the most severe).
"""

from dataclasses import dataclass

from advisor.domain.portability.rules import RE_TUNE, REWRITE_RISK, RULES
from jobs.domain.codescan.candidates import (
    IF_FULL_MASK_NAME,
    PTX_UPGRADES,
    UNLESS_OWN_FUNCTION,
    UNLESS_OWN_PACKAGE,
    Candidate,
    FileScan,
    RepoFacts,
)
from jobs.domain.codescan.model import SEVERITY_RANK, Finding


@dataclass(frozen=True, slots=True)
class Resolved:
    """A finding plus what the verdicts need and a Finding does not say."""

    finding: Finding
    in_layer: bool
    tags: frozenset[str]

    @property
    def ref(self) -> str:
        """How the scorecard and the verdicts cite the finding: "RULE file:line"."""
        return f"{self.finding.rule_id} {self.finding.file}:{self.finding.line}"


def resolve(scans: list[FileScan], facts: RepoFacts) -> list[Resolved]:
    packages = facts.own_packages()
    best: dict[tuple[str, str, int], Resolved] = {}
    for scan in scans:
        for candidate in scan.candidates:
            resolved = _resolve_one(scan, candidate, facts, packages)
            if resolved is None:
                continue
            key = (candidate.rule_id, scan.path, candidate.line)
            kept = best.get(key)
            if kept is None or _outranks(resolved.finding, kept.finding):
                best[key] = resolved
    return sorted(
        best.values(),
        key=lambda r: (r.finding.file, r.finding.line, r.finding.column, r.finding.rule_id),
    )


def _outranks(new: Finding, old: Finding) -> bool:
    return (SEVERITY_RANK[new.severity], -new.column) > (SEVERITY_RANK[old.severity], -old.column)


def _resolve_one(
    scan: FileScan, candidate: Candidate, facts: RepoFacts, packages: set[str]
) -> Resolved | None:
    check, subject = candidate.check, candidate.subject
    if check == UNLESS_OWN_FUNCTION and subject in facts.own_functions:
        return None
    if check == UNLESS_OWN_PACKAGE and subject in packages:
        return None
    if check == IF_FULL_MASK_NAME and subject not in facts.full_masks:
        return None
    severity = candidate.severity
    contexts = [candidate.context] if candidate.context else []
    if check == PTX_UPGRADES and facts.ptx_sites:
        severity = REWRITE_RISK
        contexts.append(
            f"the repo's CUDA sources contain inline PTX ({facts.ptx_sites[0]}), "
            "which hipify cannot translate"
        )
    if scan.layer and severity == REWRITE_RISK:
        severity = RE_TUNE
        contexts.append(f"in a declared abstraction layer ({scan.layer})")
    rule = RULES[candidate.rule_id]
    finding = Finding(
        rule_id=rule.id,
        category=rule.category,
        severity=severity,
        file=scan.path,
        line=candidate.line,
        column=candidate.column,
        code=candidate.code,
        reason=rule.why,
        alternative=rule.alternative,
        context="; ".join(contexts),
        snippet_start_line=candidate.snippet_start_line,
        snippet=candidate.snippet,
    )
    return Resolved(finding, bool(scan.layer), candidate.tags)
