"""The advisor's answers: sizing a workload on the catalogue, right-sizing a measured job."""

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from advisor.domain.devices import Device, Offer
from advisor.domain.ranges import Range
from advisor.domain.rightsizing import (
    Node,
    NodeGpu,
    idle_gpus_priced,
    node_of,
    observe,
    project,
    recommendation,
    rent_advice,
    verdict,
)
from advisor.domain.rightsizing.measured import MeasuredRank
from advisor.domain.rightsizing.moves import move_to, trace_framework
from advisor.domain.sizing.memory_breakdown import GIB
from advisor.domain.sizing.recommend import SizingResult, recommend
from advisor.domain.sizing.rental import pricing_models
from advisor.domain.sizing.workload import Workload
from advisor.selectors import catalogue_snapshot_get
from catalog.domain.device_names import DeviceMatch, match_device_name
from catalog.selectors import gpu_memory_gib_by_key

# Right-sizing prices what a job would cost to rerun now: on-demand, not spot or reserved.
_RIGHTSIZING_PRICING = "on_demand"


def sizing_advise(*, workload: Workload) -> SizingResult:
    """The workload sized on the catalogue, priced on the offers of its pricing model (both
    models for `any`)."""
    offers: dict[str, list[Offer]] = {}
    for pricing_model in pricing_models(workload.pricing_model):
        devices, by_device = catalogue_snapshot_get(pricing_model=pricing_model)
        for key, rows in by_device.items():
            offers[key] = [*offers.get(key, ()), *rows]
    return recommend(workload, devices, offers)


def rightsizing_report(*, summary: Mapping[str, Any], ranks: Sequence[MeasuredRank]) -> dict:
    """A trace job's report: `summary` (the analyser's JSON summary) with the catalogue GPU,
    capacity and peak share of each of its ranks, every GPU of the machine it ran on
    (`devices`, used or not) and the idle-GPU finding (`node`), the verdict, and what to rent.
    `ranks` are the summary's ranks as the jobs app read them, in the same order."""
    memory_by_key = gpu_memory_gib_by_key()
    annotated = []
    for data, rank in zip(summary.get("ranks", []), ranks, strict=True):
        memory = (rank.device_properties or {}).get("totalGlobalMem")
        match, capacity = _catalogue_gpu(rank.gpu_name, memory, memory_by_key)
        peak = rank.peak_reserved_bytes or rank.peak_allocated_bytes or rank.peak_memory_used_bytes
        annotated.append(
            {
                **data,
                "catalog_gpu": match.canonical_key,
                "capacity_bytes": capacity,
                "peak_memory_pct_of_capacity": (
                    round(100 * peak / capacity, 1) if peak and capacity else None
                ),
            }
        )
    node = node_of(ranks)
    devices = [_device(gpu, memory_by_key) for gpu in node.gpus]
    # The job's GPU is one it ran on; an idle GPU of another kind on the machine is not it.
    ran_on = [device for device in devices if device["used"]] or devices
    named = next((d for d in ran_on if d["name"]), None)
    current_key = next((d["catalog_gpu"] for d in ran_on if d["catalog_gpu"]), None)
    return {
        **summary,
        "ranks": annotated,
        "gpu": {
            "name": named["name"] if named else None,
            "catalog_gpu": current_key,
            "match": named["match"] if named else "no GPU named",
        },
        "devices": devices,
        "node": {
            "gpus_present": node.present_gpus,
            "gpus_needed": node.needed_gpus,
            "gpus_idle": node.idle_gpus,
            "finding": node.finding,
        },
        **_right_sizing(ranks, current_key, node),
    }


def _catalogue_gpu(
    name: str | None, memory: Any, memory_by_key: Mapping[str, float]
) -> tuple[DeviceMatch, int | None]:
    """The catalogue match of a GPU name and its capacity in bytes: the file's own figure when
    it gives one, else the catalogue's."""
    match = match_device_name(name, memory, memory_by_key)
    if memory:
        return match, int(memory)
    if match.canonical_key:
        return match, int(memory_by_key[match.canonical_key] * GIB)
    return match, None


def _device(gpu: NodeGpu, memory_by_key: Mapping[str, float]) -> dict:
    match, capacity = _catalogue_gpu(gpu.name, gpu.total_memory_bytes, memory_by_key)
    return {
        "index": gpu.index,
        "rank": gpu.rank,
        "source": gpu.source,
        "name": gpu.name,
        "catalog_gpu": match.canonical_key,
        "match": match.reason,
        "capacity_bytes": capacity,
        "peak_memory_used_bytes": gpu.peak_memory_used_bytes,
        "kernel_count": gpu.kernel_count,
        "used": gpu.used,
    }


def _range(value: Range | None) -> dict | None:
    return (
        None
        if value is None
        else {"low": value.low, "expected": value.expected, "high": value.high}
    )


def _right_sizing(ranks: Sequence[MeasuredRank], current_key: str | None, node: Node) -> dict:
    devices, offers = catalogue_snapshot_get(pricing_model=_RIGHTSIZING_PRICING)
    by_key: dict[str, Device] = {device.key: device for device in devices}
    current = by_key.get(current_key) if current_key else None
    try:
        judged = verdict(ranks, device_bandwidth_gb_s=current.bandwidth_gb_s if current else None)
        observed = observe(ranks)
    except ValueError as error:
        return {"verdict": None, "candidates": [], "recommendation": str(error)}
    result: dict = {
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
    framework = trace_framework(ranks)
    moves = {
        key: move
        for key, device in by_key.items()
        if key != current.key and (move := move_to(current, device, framework)) is not None
    }
    result["framework"] = framework
    result["platform"] = current.platform
    # Like for like: the same vendor's GPUs, which run the job as it is. Another vendor's are
    # a move, listed apart with what it costs the code; never the recommendation.
    others = [device for key, device in by_key.items() if key != current.key]
    projections = project(
        observed,
        current,
        others,
        offers,
        node_gpu_count=node.present_gpus if node.idle_gpus else None,
    )
    like_for_like = [p for p in projections if p.device.key not in moves]
    sentence = recommendation(observed, like_for_like, verdict=judged)
    # The report's short "what to rent" line; the recommendation keeps the whole sentence.
    result["rent"] = rent_advice(observed, like_for_like, verdict=judged)
    finding = idle_gpus_priced(node.finding, like_for_like)
    result["recommendation"] = f"{finding}; {sentence}" if finding else sentence
    result["moves"] = []
    for projection in projections:
        best = projection.best_offer
        move = moves.get(projection.device.key)
        rows = result["moves"] if move else result["candidates"]
        rows.append(
            {
                "gpu": projection.device.key,
                "gpu_name": projection.device.name,
                # Stored so the job page draws the candidate's capacity from the report itself,
                # not from a catalogue that may have changed since.
                "capacity_bytes": int(projection.device.memory_gib * GIB),
                "is_current": projection.is_current,
                # GPUs per instance it is priced on: the job's count, or the machine's for the
                # current GPU when some of it sat idle.
                "gpu_count": projection.gpu_count,
                "fits": projection.fits,
                "reason": projection.reason,
                "projected_step_time_s": _range(projection.step_s),
                "usd_per_1000_steps": _range(best.usd_per_1000_steps) if best else None,
                "offer": _offer(best.offer) if best else None,
                "notes": projection.notes,
                **({"move": move.verdict, "move_why": move.why} if move else {}),
            }
        )
    return result


def _offer(offer: Offer) -> dict:
    return {
        "provider": offer.provider,
        "instance_type": offer.instance_type,
        "gpu_count": offer.gpu_count,
        "usd_per_hour": offer.usd_per_hour,
    }
