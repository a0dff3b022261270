"""nvidia-smi logs summarised per GPU, in RankSummary form (rank = GPU index).

Each sample stands for the time until the next one. The last stands for one sampling period
(the median gap; 1 s, nvidia-smi's usual `-l 1`, when there is a single sample), and a gap longer
than MAX_GAP_PERIODS periods counts as that many: the logger was stopped, and we would rather
not pretend the GPU kept its last reading for an hour. Utilisation statistics are weighted by
that time, over the samples that report utilisation.

utilization.gpu is the share of the sample period in which any kernel ran, so busy time is
utilisation × time and the rest is idle. It cannot tell kernel kinds apart: busy time is all
reported as compute, with no category, kernel or copy detail.
"""

import math
import statistics
from collections.abc import Callable, Sequence
from itertools import pairwise

from jobs.domain.traces.nvidia_smi.csv_log import GpuSamples, parse_nvidia_smi
from jobs.domain.traces.sources import Readable
from jobs.domain.traces.summary import RankSummary

LOW_UTILIZATION_PCT = 10.0
SERIES_MAX_POINTS = 500
MAX_GAP_PERIODS = 10
_DEFAULT_PERIOD_S = 1.0
_US_PER_S = 1_000_000


def summarize_nvidia_smi(reader: Readable, *, label: str, warnings: list[str]) -> list[RankSummary]:
    log = parse_nvidia_smi(reader, label=label)
    if log.skipped_rows:
        warnings.append(f"{label}: {log.skipped_rows} rows skipped: not readable as samples")
    start_s = min(min(gpu.time_s) for gpu in log.gpus)
    ranks = [_summarize_gpu(gpu, ordinal, start_s, label) for ordinal, gpu in enumerate(log.gpus)]
    for rank in ranks:
        if rank.utilization_mean_pct is None:
            warnings.append(
                f"{label} (GPU {rank.rank}): utilization.gpu is never reported; busy time unknown"
            )
    return sorted(ranks, key=lambda rank: rank.rank or 0)


def _summarize_gpu(gpu: GpuSamples, ordinal: int, start_s: float, label: str) -> RankSummary:
    order = sorted(range(len(gpu.time_s)), key=gpu.time_s.__getitem__)
    times_s = [gpu.time_s[i] - start_s for i in order]
    weights_s = _weights(times_s)
    duration_s = sum(weights_s)
    utilization = [gpu.utilization_pct[i] for i in order]
    mean_pct = _weighted_mean(utilization, weights_s)
    reported_s = sum(w for u, w in zip(utilization, weights_s, strict=True) if not math.isnan(u))
    low_s = sum(w for u, w in zip(utilization, weights_s, strict=True) if u < LOW_UTILIZATION_PCT)
    used = [gpu.memory_used_bytes[i] for i in order]
    peak_used = max((value for value in used if not math.isnan(value)), default=None)
    duration_us = duration_s * _US_PER_S
    busy_us = duration_us * (mean_pct or 0.0) / 100
    idle_us = duration_us - busy_us if mean_pct is not None else 0.0
    window_start_us = (times_s[0] if times_s else 0.0) * _US_PER_S
    properties = {
        key: value
        for key, value in (
            ("id", _index(gpu.key, ordinal)),
            ("name", gpu.name),
            ("totalGlobalMem", gpu.memory_total_bytes),
        )
        if value is not None
    }
    return RankSummary(
        rank=_index(gpu.key, ordinal),
        world_size=None,
        file=label,
        gpu_name=gpu.name,
        device_properties=properties,
        window_start_us=window_start_us,
        window_end_us=window_start_us + duration_us,
        kernel_time_us=duration_us,
        idle_us=idle_us,
        compute_us=busy_us,
        non_compute_us=0.0,
        idle_pct=100 * idle_us / duration_us if duration_us else 0.0,
        compute_pct=100 * busy_us / duration_us if duration_us else 0.0,
        non_compute_pct=0.0,
        category_time_us={},
        top_kernels=[],
        memcpy_bytes_by_kind={},
        communication_overlap_pct=None,
        launch_gap_stream=None,
        launch_gap_count=0,
        launch_gap_total_us=0.0,
        launch_gap_p50_us=None,
        peak_allocated_bytes=None,
        peak_reserved_bytes=None,
        profiler_steps=0,
        gpu_event_count=0,
        cpu_only=False,
        ns_rounding_used=False,
        source="nvidia-smi",
        peak_memory_used_bytes=int(peak_used) if peak_used is not None else None,
        samples=len(times_s),
        duration_s=duration_s,
        utilization_mean_pct=mean_pct,
        utilization_p95_pct=_weighted_percentile(utilization, weights_s, 95),
        low_utilization_s=low_s if mean_pct is not None else None,
        low_utilization_pct=100 * low_s / reported_s if reported_s else None,
        memory_utilization_mean_pct=_weighted_mean(
            [gpu.memory_utilization_pct[i] for i in order], weights_s
        ),
        power_mean_w=_weighted_mean([gpu.power_w[i] for i in order], weights_s),
        utilization_series=_downsample(times_s, utilization, statistics.fmean),
        memory_series=[(t, int(b)) for t, b in _downsample(times_s, used, max)],
        # Each logged GPU is present; nvidia-smi cannot count kernels.
        gpus_present=[
            {
                "id": _index(gpu.key, ordinal),
                "name": gpu.name,
                "total_memory_bytes": properties.get("totalGlobalMem"),
                "kernel_count": None,
            }
        ],
    )


def _index(key: str, ordinal: int) -> int:
    """The GPU index as nvidia-smi numbered it; the order of appearance when the log has uuid
    or bus id instead."""
    return int(key) if key.isdigit() else ordinal


def _weights(times_s: Sequence[float]) -> list[float]:
    gaps = [later - earlier for earlier, later in pairwise(times_s)]
    positive = [gap for gap in gaps if gap > 0]
    period_s = statistics.median(positive) if positive else _DEFAULT_PERIOD_S
    return [min(gap, MAX_GAP_PERIODS * period_s) for gap in gaps] + [period_s]


def _weighted_mean(values: Sequence[float], weights: Sequence[float]) -> float | None:
    pairs = [(v, w) for v, w in zip(values, weights, strict=True) if not math.isnan(v)]
    total = sum(w for _, w in pairs)
    if not pairs:
        return None
    if total <= 0:
        return statistics.fmean(v for v, _ in pairs)
    return sum(v * w for v, w in pairs) / total


def _weighted_percentile(
    values: Sequence[float], weights: Sequence[float], pct: float
) -> float | None:
    """The smallest value at or below which pct% of the reported time lies."""
    pairs = sorted((v, w) for v, w in zip(values, weights, strict=True) if not math.isnan(v))
    total = sum(w for _, w in pairs)
    if not pairs:
        return None
    reached = 0.0
    for value, weight in pairs:
        reached += weight
        if reached >= total * pct / 100:
            return value
    return pairs[-1][0]


def _downsample(
    times_s: Sequence[float], values: Sequence[float], combine: Callable[[list[float]], float]
) -> list[tuple[float, float]]:
    """At most SERIES_MAX_POINTS points for a chart: runs of consecutive samples combined
    (mean utilisation, peak memory), each at its run's first time; runs with no reported value
    are left out."""
    size = max(1, math.ceil(len(times_s) / SERIES_MAX_POINTS))
    points = []
    for first in range(0, len(times_s), size):
        reported = [v for v in values[first : first + size] if not math.isnan(v)]
        if reported:
            points.append((times_s[first], float(combine(reported))))
    return points
