"""Reads the jobs app's own report formats: a trace analysis's ranks as the advisor's
right-sizing takes them (`advisor.services.rightsizing_report` writes the trace report), and a
code scan's findings by filter, for the page and the API."""

from collections.abc import Mapping
from dataclasses import fields

from jobs.domain.traces import KernelTotal, RankSummary

_RANK_FIELDS = {f.name for f in fields(RankSummary)}


def trace_ranks(summary: Mapping) -> list[RankSummary]:
    """The analyser's JSON summary's ranks, read back into the RankSummary they were."""
    ranks = []
    for data in summary.get("ranks", []):
        values = {key: value for key, value in data.items() if key in _RANK_FIELDS}
        values["top_kernels"] = [KernelTotal(*kernel) for kernel in values.get("top_kernels", [])]
        ranks.append(RankSummary(**values))
    return ranks


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
