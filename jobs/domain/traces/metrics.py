"""A rank's numbers from its kept GPU events, for every format: HTA's temporal breakdown and a
few extras."""

import statistics
from collections import Counter, defaultdict
from typing import Any

from jobs.domain.traces.idle import idle_breakdown
from jobs.domain.traces.intervals import Interval, merge, overlap_length, total_length
from jobs.domain.traces.kernels import (
    KernelType,
    is_matrix_math,
    kernel_type,
    math_precision,
    memcpy_kind,
    names_fp64,
)
from jobs.domain.traces.summary import KernelTotal
from jobs.domain.traces.work import GpuWork

TOP_KERNELS = 10
# What counts as a kernel: code the GPU ran, not the copy engines' or the driver's work.
KERNEL_TYPES = frozenset({KernelType.COMPUTATION, KernelType.COMMUNICATION})
# Gaps shorter than this are the launch path's normal latency, not starvation.
LAUNCH_GAP_THRESHOLD_US = 10.0


def work_metrics(
    work: GpuWork, names: list[str], *, label: str, warnings: list[str]
) -> dict[str, Any]:
    """The RankSummary fields that GPU events alone decide, for any source of events
    (names[work.name_id[i]] is event i's name)."""
    types = [kernel_type(name) for name in names]
    math = [
        types[i] is KernelType.COMPUTATION and is_matrix_math(name) for i, name in enumerate(names)
    ]
    return {
        **_temporal_breakdown(work, types, math, label, warnings),
        **_by_kernel(work, types, math, names),
        **_launch_gaps(work),
        **idle_breakdown(work),
    }


def _temporal_breakdown(
    work: GpuWork, types: list[KernelType], math: list[bool], label: str, warnings: list[str]
) -> dict[str, Any]:
    """idle = window - union(all); compute = union(computation); non-compute = the rest."""
    busy = merge(zip(work.start_us, work.end_us, strict=True))
    if not busy:
        return {
            "window_start_us": 0.0,
            "window_end_us": 0.0,
            "kernel_time_us": 0.0,
            "idle_us": 0.0,
            "compute_us": 0.0,
            "non_compute_us": 0.0,
            "idle_pct": 0.0,
            "compute_pct": 0.0,
            "non_compute_pct": 0.0,
            "communication_overlap_pct": None,
            "math_us": 0.0,
        }
    math_intervals = [
        (start_us, end_us)
        for start_us, end_us, name_id in zip(work.start_us, work.end_us, work.name_id, strict=True)
        if math[name_id]
    ]
    by_type: dict[KernelType, list[Interval]] = defaultdict(list)
    for start_us, end_us, name_id in zip(work.start_us, work.end_us, work.name_id, strict=True):
        by_type[types[name_id]].append((start_us, end_us))
    window_start_us, window_end_us = busy[0][0], busy[-1][1]
    kernel_time_us = window_end_us - window_start_us
    idle_us = kernel_time_us - total_length(busy)
    computation = merge(by_type[KernelType.COMPUTATION])
    compute_us = total_length(computation)
    non_compute_us = kernel_time_us - compute_us - idle_us
    if kernel_time_us <= 0:
        warnings.append(f"{label}: the GPU events span no time; percentages are zero")

    def pct(part_us: float) -> float:
        return 100.0 * part_us / kernel_time_us if kernel_time_us > 0 else 0.0

    communication = merge(by_type[KernelType.COMMUNICATION])
    communication_us = total_length(communication)
    overlap_pct = (
        100.0 * overlap_length(communication, computation) / communication_us
        if communication_us > 0
        else None
    )
    return {
        "window_start_us": work.time_base_us + window_start_us,
        "window_end_us": work.time_base_us + window_end_us,
        "kernel_time_us": kernel_time_us,
        "idle_us": idle_us,
        "compute_us": compute_us,
        "non_compute_us": non_compute_us,
        "idle_pct": pct(idle_us),
        "compute_pct": pct(compute_us),
        "non_compute_pct": pct(non_compute_us),
        "communication_overlap_pct": overlap_pct,
        "math_us": total_length(merge(math_intervals)),
    }


def _by_kernel(
    work: GpuWork, types: list[KernelType], math: list[bool], names: list[str]
) -> dict[str, Any]:
    count: Counter[int] = Counter()
    total_us: defaultdict[int, float] = defaultdict(float)
    copied_bytes: Counter[str] = Counter()
    for start, end, name_id, nbytes in zip(
        work.start_us, work.end_us, work.name_id, work.nbytes, strict=True
    ):
        count[name_id] += 1
        total_us[name_id] += end - start
        if nbytes and types[name_id] is KernelType.MEMORY:
            kind = memcpy_kind(names[name_id])
            if kind is not None:
                copied_bytes[kind] += nbytes
    category_time_us = dict.fromkeys((t.value for t in KernelType), 0.0)
    copy_us: defaultdict[str, float] = defaultdict(float)
    precision_us: defaultdict[str, float] = defaultdict(float)
    for name_id, total in total_us.items():
        category_time_us[types[name_id].value] += total
        kind = memcpy_kind(names[name_id])
        if kind is not None and types[name_id] is KernelType.MEMORY:
            copy_us[kind] += total
        if math[name_id]:
            precision_us[math_precision(names[name_id])] += total
    fp64_us = float(
        sum(
            total
            for name_id, total in total_us.items()
            if types[name_id] is KernelType.COMPUTATION and names_fp64(names[name_id])
        )
    )
    pageable_us = float(
        sum(
            total
            for name_id, total in total_us.items()
            if types[name_id] is KernelType.MEMORY and "Pageable" in names[name_id]
        )
    )
    ranked = sorted(total_us, key=lambda name_id: (-total_us[name_id], names[name_id]))
    top = [
        KernelTotal(names[i], types[i].value, count[i], total_us[i]) for i in ranked[:TOP_KERNELS]
    ]
    return {
        "category_time_us": category_time_us,
        "top_kernels": top,
        "memcpy_bytes_by_kind": dict(sorted(copied_bytes.items())),
        "memcpy_us_by_kind": dict(sorted(copy_us.items())),
        "math_time_by_precision_us": dict(sorted(precision_us.items())),
        "kernel_count": sum(n for name_id, n in count.items() if types[name_id] in KERNEL_TYPES),
        "fp64_time_us": fp64_us,
        "pageable_copy_us": pageable_us,
    }


# A bound on the GPUs one file may list, so a hostile file cannot fill the report with them;
# far above what one machine holds.
MAX_GPUS_PRESENT = 64


def gpus_present(
    listed: list[dict[str, Any]],
    work: GpuWork,
    names: list[str],
    *,
    label: str,
    warnings: list[str],
) -> list[dict[str, Any]]:
    """Every GPU a file lists (device properties under Kineto's names: id, name,
    totalGlobalMem), and any it ran work on without listing, each with this work's kernel
    count on it: {"id", "name", "total_memory_bytes", "kernel_count"}, by id; at most
    MAX_GPUS_PRESENT, those that ran work first, with a warning when some are left out."""
    is_kernel = [kernel_type(name) in KERNEL_TYPES for name in names]
    kernels: Counter[int] = Counter()
    # Counting (device, name) pairs runs in C; the few distinct pairs are then looked at here.
    pairs = Counter(zip(work.device, work.name_id, strict=True))
    for (device, name_id), count in pairs.items():
        if is_kernel[name_id]:
            kernels[device] += count
    found: dict[int, dict[str, Any]] = {}
    for properties in listed:
        device = properties.get("id")
        if type(device) is int and device not in found:
            name, memory = properties.get("name"), properties.get("totalGlobalMem")
            found[device] = {
                "id": device,
                "name": name if isinstance(name, str) else None,
                "total_memory_bytes": memory if type(memory) is int and memory > 0 else None,
                "kernel_count": kernels[device],
            }
    for device in sorted(set(work.device) - set(found)):
        if device >= 0:
            found[device] = {
                "id": device,
                "name": None,
                "total_memory_bytes": None,
                "kernel_count": kernels[device],
            }
    kept = sorted(found, key=lambda device: (found[device]["kernel_count"] == 0, device))
    message = f"{label}: lists {len(kept)} GPUs; only {MAX_GPUS_PRESENT} are reported"
    # One warning per file, though each of its GPUs' summaries reads the same list.
    if len(kept) > MAX_GPUS_PRESENT and message not in warnings:
        warnings.append(message)
    return [found[device] for device in sorted(kept[:MAX_GPUS_PRESENT])]


def _launch_gaps(work: GpuWork) -> dict[str, Any]:
    """Gaps over LAUNCH_GAP_THRESHOLD_US between consecutive events on the busiest stream.

    A stream runs its work in order, so a gap there means the GPU waited on the host: launch
    overhead, a sync, or a data-loader stall.
    """
    busy_us: defaultdict[tuple[int, int], float] = defaultdict(float)
    spans: defaultdict[tuple[int, int], list[Interval]] = defaultdict(list)
    for start, end, stream, device in zip(
        work.start_us, work.end_us, work.stream, work.device, strict=True
    ):
        busy_us[(device, stream)] += end - start
        spans[(device, stream)].append((start, end))
    if not busy_us:
        return _no_gaps(None)
    busiest = max(busy_us, key=lambda key: (busy_us[key], -key[0], -key[1]))
    gaps = []
    ordered = sorted(spans[busiest])
    latest_end = ordered[0][1]
    for start, end in ordered[1:]:
        gap = start - latest_end
        if gap > LAUNCH_GAP_THRESHOLD_US:
            gaps.append(gap)
        latest_end = max(latest_end, end)
    if not gaps:
        return _no_gaps(busiest[1])
    return {
        "launch_gap_stream": busiest[1],
        "launch_gap_count": len(gaps),
        "launch_gap_total_us": sum(gaps),
        "launch_gap_p50_us": statistics.median(gaps),
    }


def _no_gaps(stream: int | None) -> dict[str, Any]:
    return {
        "launch_gap_stream": stream,
        "launch_gap_count": 0,
        "launch_gap_total_us": 0.0,
        "launch_gap_p50_us": None,
    }
