"""One Kineto rank's summary: the kept GPU work, its metrics and the device it ran on."""

from collections import defaultdict
from typing import Any

from jobs.domain.traces.kineto.parse import ParsedTrace
from jobs.domain.traces.kineto.steps import select_gpu_work
from jobs.domain.traces.metrics import gpus_present, work_metrics
from jobs.domain.traces.step_times import step_stats
from jobs.domain.traces.summary import RankSummary
from jobs.domain.traces.work import GpuWork


def summarize_rank(parsed: ParsedTrace, *, ns_rounding: bool, warnings: list[str]) -> RankSummary:
    events = parsed.events
    work = select_gpu_work(events, ns_rounding=ns_rounding)
    label = parsed.label
    if len(events.gpu) == 0:
        warnings.append(
            f"{label}: no GPU events (CPU-only rank); its times are zero. Was it profiled with "
            "CUDA activities?"
        )
    elif len(events.step_names) >= 2 and not work.last_step_dropped:
        warnings.append(
            f"{label}: the last ProfilerStep could not be dropped as HTA does (all GPU work was "
            "launched in it, or no CPU-side step marks it); analysed everything instead"
        )
    device = _main_device(work)
    properties = _device_properties(parsed, device)
    name = properties.get("name")
    base: dict[str, Any] = {
        "rank": parsed.rank,
        "world_size": parsed.world_size,
        "file": label,
        "gpu_name": name if isinstance(name, str) else None,
        "device_properties": properties,
        "peak_allocated_bytes": events.peak_allocated_bytes,
        "peak_reserved_bytes": events.peak_reserved_bytes,
        "profiler_steps": len(events.step_names),
        "gpu_event_count": len(work),
        "cpu_only": len(events.gpu) == 0,
        "ns_rounding_used": work.rounded,
        "last_step_dropped": work.last_step_dropped,
        "gpus_present": gpus_present(
            parsed.device_properties, work, events.names, label=label, warnings=warnings
        ),
        "dataloader_calls": events.dataloader_calls,
        "dataloader_us": events.dataloader_us,
        "dataloader_iterators": sorted(events.dataloader_iterators),
        **step_stats(events.step_spans, drop_last=work.last_step_dropped),
    }
    return RankSummary(**base, **work_metrics(work, events.names, label=label, warnings=warnings))


def _main_device(work: GpuWork) -> int | None:
    """The device doing most of the rank's GPU work: a trace may list every GPU on the host."""
    busy_us: defaultdict[int, float] = defaultdict(float)
    for start, end, device in zip(work.start_us, work.end_us, work.device, strict=True):
        busy_us[device] += end - start
    if not busy_us:
        return None
    return max(busy_us, key=lambda device: (busy_us[device], -device))


def _device_properties(parsed: ParsedTrace, device: int | None) -> dict[str, Any]:
    listed = parsed.device_properties
    for properties in listed:
        if device is not None and properties.get("id") == device:
            return properties
    return listed[0] if listed else {}
