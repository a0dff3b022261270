"""Which GPU events a rank's metrics cover, per Holistic Trace Analysis's conventions.

HTA (0.5.0, Trace._filter_irrelevant_gpu_kernels) drops the last ProfilerStep when a trace has two
or more distinct ProfilerStep names, because the profiler usually stops mid-way through it:

- CPU-side rows are kept when they start before the last step starts;
- GPU rows (stream >= 0 and correlation >= 0, or a device-wide sync) are kept when some kept CPU
  row has the same correlation id, i.e. their launching runtime call started before the last
  step. GPU rows whose launch is not in the trace are dropped with them.

With zero or one step nothing is dropped. Rows that carry a stream but are not GPU rows by that
test (a Triton launcher cpu_op, say) follow the CPU rule and still count as GPU time, as in HTA.

HTA also rounds ns-resolution traces (decimal timestamps) to whole microseconds, start up and end
down; we do so only when asked.

Each kept GPU row also carries when its launch started (the earliest CPU row with its
correlation id, as HTA joins them), which the idle-time breakdown needs.
"""

import math

from jobs.domain.traces.kineto.collect import EventCollector
from jobs.domain.traces.work import GpuWork


def select_gpu_work(events: EventCollector, *, ns_rounding: bool) -> GpuWork:
    gpu = events.gpu
    count = len(gpu)
    rounded = ns_rounding and events.float_timestamps
    first_launch = _first_launch_us(events)
    keep = (
        _kept_by_step_filter(events, first_launch, rounded) if len(events.step_names) >= 2 else None
    )
    if keep is not None and not any(keep):
        # Everything was launched inside the last step: HTA would report nothing at all.
        # Analysing it all beats an empty answer; the caller warns.
        keep = None
    indices = range(count) if keep is None else [i for i in range(count) if keep[i]]
    base_us = events.time_base_us or 0.0
    starts_us, ends_us, launches_us = [], [], []
    for i in indices:
        launch_us = first_launch.get(gpu.correlation[i]) if gpu.launched[i] else None
        if launch_us is not None and rounded:
            launch_us = math.ceil(base_us + launch_us) - base_us
        launches_us.append(math.nan if launch_us is None else launch_us)
        start_us = gpu.ts_us[i]
        if rounded:
            # HTA rounds the absolute timestamps, and its end is the absolute start + dur.
            absolute_us = base_us + start_us
            start_us = math.ceil(absolute_us) - base_us
            end_us = math.floor(absolute_us + gpu.dur_us[i]) - base_us
        else:
            end_us = start_us + gpu.dur_us[i]
        starts_us.append(start_us)
        ends_us.append(end_us)
    return GpuWork(
        start_us=starts_us,
        end_us=ends_us,
        name_id=[gpu.name_id[i] for i in indices],
        stream=[gpu.stream[i] for i in indices],
        device=[gpu.device[i] for i in indices],
        nbytes=[gpu.nbytes[i] for i in indices],
        last_step_dropped=keep is not None,
        dropped_count=count - len(starts_us),
        rounded=rounded,
        time_base_us=base_us,
        launch_us=launches_us,
    )


def _first_launch_us(events: EventCollector) -> dict[int, float]:
    """Correlation id -> start of the earliest CPU row carrying it, for the launched GPU rows."""
    gpu = events.gpu
    wanted = {gpu.correlation[i] for i in range(len(gpu)) if gpu.launched[i]}
    first_launch: dict[int, float] = {}
    for correlation, ts in zip(events.cpu_correlation, events.cpu_ts_us, strict=True):
        if correlation in wanted:
            earliest = first_launch.get(correlation)
            if earliest is None or ts < earliest:
                first_launch[correlation] = ts
    if events.uncorrelated_cpu_min_ts_us != math.inf:
        first_launch[-1] = events.uncorrelated_cpu_min_ts_us
    return first_launch


def _kept_by_step_filter(
    events: EventCollector, first_launch: dict[int, float], rounded: bool
) -> list[bool] | None:
    if events.last_step_start_us == -math.inf:
        return None  # the step names were all on GPU rows; HTA would find no CPU step to cut at

    base_us = events.time_base_us or 0.0

    def at(ts_us: float) -> float:
        return math.ceil(base_us + ts_us) - base_us if rounded else ts_us

    cutoff_us = at(events.last_step_start_us)
    gpu = events.gpu
    keep = []
    for i in range(len(gpu)):
        if gpu.launched[i]:
            launch = first_launch.get(gpu.correlation[i])
            keep.append(launch is not None and at(launch) < cutoff_us)
        else:
            keep.append(at(gpu.ts_us[i]) < cutoff_us)
    return keep
