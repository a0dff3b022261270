"""Reads the jobs app's own report formats: a trace analysis's ranks as the advisor's
right-sizing takes them (`advisor.services.rightsizing_report` writes the trace report) and
what the trace report page adds to them (summary lines, fixes, step times, top operators), and a
code scan's findings by filter, for the page and the API."""

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from jobs.domain.codescan.fingerprints import fingerprints
from jobs.domain.traces import KernelTotal, RankSummary
from jobs.domain.traces.compare import top_operators
from jobs.domain.traces.prescriptions import Prescription, facts_of, prescribe

_RANK_FIELDS = {f.name for f in fields(RankSummary)}
_GIB = 2**30
# Ranks whose step times and top operators the page shows; the API report has them all.
SHOWN_RANKS = 2


def trace_ranks(summary: Mapping) -> list[RankSummary]:
    """The analyser's JSON summary's ranks, read back into the RankSummary they were."""
    ranks = []
    for data in summary.get("ranks", []):
        values = {key: value for key, value in data.items() if key in _RANK_FIELDS}
        values["top_kernels"] = [KernelTotal(*kernel) for kernel in values.get("top_kernels", [])]
        ranks.append(RankSummary(**values))
    return ranks


def trace_report_context(report: Mapping) -> dict[str, Any]:
    """What the trace report page shows beyond the stored report: the three-line summary, the
    fixes with their evidence, step times and top operators of the first ranks, and the
    candidates split into those with an offer and those without."""
    ranks = trace_ranks(report)
    verdict = report.get("verdict") or {}
    prescription = prescribe(ranks, verdict.get("kind"))
    candidates = [c for c in report.get("candidates", []) if c.get("fits")]
    shown = [rank for rank in ranks if not rank.cpu_only][:SHOWN_RANKS]
    return {
        "summary_lines": summary_lines(report, ranks, prescription),
        "prescription": prescription,
        "rank_details": [
            {"rank": rank, "steps_ms": _steps_ms(rank), "top_operators": top_operators(rank)}
            for rank in shown
            if rank.top_kernels or rank.step_count
        ],
        "offered_candidates": [c for c in candidates if c.get("usd_per_1000_steps")],
        "unoffered_candidates": [c for c in candidates if not c.get("usd_per_1000_steps")],
    }


def _steps_ms(rank: RankSummary) -> dict[str, float] | None:
    if not rank.step_count or rank.step_mean_us is None:
        return None
    return {
        "mean": rank.step_mean_us / 1000,
        "stdev": (rank.step_stdev_us or 0.0) / 1000,
        "fastest": (rank.step_min_us or 0.0) / 1000,
        "slowest": (rank.step_slowest_us or 0.0) / 1000,
    }


def summary_lines(
    report: Mapping, ranks: list[RankSummary], prescription: Prescription
) -> dict[str, str]:
    """The report's top three lines: what the job used, what to rent, what to fix first."""
    observed = report.get("observed") or {}
    gpu_name = (report.get("gpu") or {}).get("name") or "an unnamed GPU"
    count = observed.get("gpu_count") or len([rank for rank in ranks if not rank.cpu_only]) or 1
    used = [f"{count} × {gpu_name}"]
    facts = facts_of(ranks)
    steps = [rank.step_count for rank in ranks if rank.step_count]
    if facts is not None and facts.step_mean_us:
        used.append(f"{facts.step_mean_us / 1000:,.0f} ms per step over {max(steps)} steps")
    if facts is not None:
        used.append(f"GPU busy {100 - facts.idle_pct:.0f}% of the time")
    elif observed.get("host_idle_s") is not None and observed.get("step_s"):
        used.append(f"GPU busy {100 - 100 * observed['host_idle_s'] / observed['step_s']:.0f}%")
    if observed.get("peak_memory_bytes"):
        used.append(f"peak memory {observed['peak_memory_bytes'] / _GIB:.1f} GiB")
    first = prescription.first
    if first is not None:
        fix = f"{first.title}: {first.evidence}"
    elif facts is None:
        fix = (
            "this log shows no kernels; profile a few steps with torch.profiler to see what to fix"
        )
    else:
        fix = "nothing stands out in the trace"
    return {
        "used": ", ".join(used),
        # Reports stored before the short line have only the whole sentence.
        "rent": str(report.get("rent") or report.get("recommendation") or "no recommendation"),
        "fix": fix,
    }


# A code scan's findings can be filtered by these fields, on the report page and in the API.
FINDING_FILTERS = ("category", "severity", "file")


def findings_matching(report: dict, filters: Mapping[str, str]) -> list[dict]:
    """The findings a code scan's report lists that equal every given filter value (the
    FINDING_FILTERS only; empty values are ignored)."""
    chosen = {key: filters[key] for key in FINDING_FILTERS if filters.get(key)}
    return [
        finding
        for finding in report.get("findings", [])
        if all(str(finding.get(key)) == value for key, value in chosen.items())
    ]


def finding_fingerprints(report: Mapping) -> list[str]:
    """Each listed finding's fingerprint, in order: as stored, or (reports stored before
    findings had one) computed the same way from the listed findings."""
    findings = report.get("findings", [])
    if all(finding.get("fingerprint") for finding in findings):
        return [finding["fingerprint"] for finding in findings]
    return fingerprints((f["rule_id"], f["file"], f["code"]) for f in findings)


def finding_anchor(fingerprint: str) -> str:
    """The id of a finding's row on the report page."""
    return "finding-" + fingerprint.replace(":", "-")


def finding_snippet_lines(finding: Mapping) -> list[dict]:
    """The lines around a finding, numbered, its own line marked; [] for reports stored
    before findings kept them (the page shows the finding's line alone)."""
    start = finding.get("snippet_start_line") or 0
    if not start or not finding.get("snippet"):
        return []
    return [
        {"number": number, "text": text, "is_finding": number == finding["line"]}
        for number, text in enumerate(finding["snippet"].split("\n"), start=start)
    ]
