"""Turns the analyser's summary into the job's report: the catalogue GPU per rank, memory
against capacity, the verdict, and (through the catalogue's GPUs and offers) what to rent.
And reads a code scan's report: its findings by filter, for the page and the API."""

from collections.abc import Mapping
from dataclasses import asdict, fields

from advisor.services import sizing_catalogue
from catalog.domain.device_names import match_device_name
from catalog.selectors import gpu_memory_gib_by_key
from jobs.domain.rightsizing import DeviceSpec, Offer, observe, project, recommendation, verdict
from jobs.domain.traces import KernelTotal, RankSummary

_RANK_FIELDS = {f.name for f in fields(RankSummary)}
_SPEC_FIELDS = [f.name for f in fields(DeviceSpec)]


def _rank(data: dict) -> RankSummary:
    values = {key: value for key, value in data.items() if key in _RANK_FIELDS}
    values["top_kernels"] = [KernelTotal(*kernel) for kernel in values.get("top_kernels", [])]
    return RankSummary(**values)


def _range(value) -> dict | None:
    return (
        None
        if value is None
        else {"low": value.low, "expected": value.expected, "high": value.high}
    )


def _catalogue() -> tuple[dict[str, DeviceSpec], dict[str, list[Offer]]]:
    devices, offers = sizing_catalogue(pricing_model="on_demand")
    specs = {
        d.key: DeviceSpec(**{name: getattr(d, name) for name in _SPEC_FIELDS}) for d in devices
    }
    return specs, {
        key: [Offer(o.provider, o.instance_type, o.gpu_count, o.usd_per_hour) for o in rows]
        for key, rows in offers.items()
    }


def _right_sizing(ranks: list[RankSummary], current_key: str | None) -> dict:
    specs, offers = _catalogue()
    current = specs.get(current_key) if current_key else None
    try:
        judged = verdict(ranks, device_bandwidth_gb_s=current.bandwidth_gb_s if current else None)
        observed = observe(ranks)
    except ValueError as error:
        return {"verdict": None, "candidates": [], "recommendation": str(error)}
    result = {
        "verdict": {
            "kind": judged.kind,
            "confidence": judged.confidence,
            "rule": judged.rule,
            "evidence": [asdict(item) for item in judged.evidence],
        },
        "observed": asdict(observed),
        "candidates": [],
    }
    if current is None:
        result["recommendation"] = (
            "the GPU this ran on is not in the catalogue, so nothing can be compared with it"
        )
        return result
    others = [spec for key, spec in specs.items() if key != current.key]
    projections = project(observed, current, others, offers)
    result["recommendation"] = recommendation(observed, projections, verdict=judged)
    for projection in projections:
        best = projection.best_offer
        result["candidates"].append(
            {
                "gpu": projection.device.key,
                "gpu_name": projection.device.name,
                "is_current": projection.is_current,
                "fits": projection.fits,
                "reason": projection.reason,
                "projected_step_time_s": _range(projection.step_s),
                "usd_per_1000_steps": _range(best.usd_per_1000_steps) if best else None,
                "offer": {
                    "provider": best.offer.provider,
                    "instance_type": best.offer.instance_type,
                    "gpu_count": best.offer.gpu_count,
                    "usd_per_hour": best.offer.usd_per_hour,
                }
                if best
                else None,
                "notes": projection.notes,
            }
        )
    return result


def trace_report(summary: dict) -> dict:
    memory_by_key = gpu_memory_gib_by_key()
    devices = []
    for rank in summary.get("ranks", []):
        properties = rank.get("device_properties") or {}
        memory = properties.get("totalGlobalMem")
        match = match_device_name(rank.get("gpu_name"), memory, memory_by_key)
        rank["catalog_gpu"] = match.canonical_key
        capacity = (
            int(memory)
            if memory
            else (int(memory_by_key[match.canonical_key] * 2**30) if match.canonical_key else None)
        )
        rank["capacity_bytes"] = capacity
        peak = (
            rank.get("peak_reserved_bytes")
            or rank.get("peak_allocated_bytes")
            or rank.get("peak_memory_used_bytes")
        )
        rank["peak_memory_pct_of_capacity"] = (
            round(100 * peak / capacity, 1) if peak and capacity else None
        )
        devices.append(
            {
                "rank": rank.get("rank"),
                "source": rank.get("source", "kineto"),
                "name": rank.get("gpu_name"),
                "catalog_gpu": match.canonical_key,
                "match": match.reason,
                "capacity_bytes": capacity,
                "peak_memory_used_bytes": peak,
                "kernel_count": rank.get("gpu_event_count")
                if rank.get("source") != "nvidia-smi"
                else None,
            }
        )
    named = next((d for d in devices if d["name"]), None)
    current_key = next((d["catalog_gpu"] for d in devices if d["catalog_gpu"]), None)
    ranks = [_rank(rank) for rank in summary.get("ranks", [])]
    return {
        **summary,
        "gpu": {
            "name": named["name"] if named else None,
            "catalog_gpu": current_key,
            "match": named["match"] if named else "no GPU named",
        },
        "devices": devices,
        **_right_sizing(ranks, current_key),
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
