"""What an analysis returns: one summary per rank, plus the upload's files and warnings."""

from dataclasses import dataclass, field
from typing import Any, NamedTuple


class KernelTotal(NamedTuple):
    """One GPU event name's share of the analysed window."""

    name: str
    category: str  # computation | communication | memory | other
    count: int
    total_us: float


@dataclass(frozen=True)
class RankSummary:
    """Holistic-Trace-Analysis-style metrics for one rank (one trace file).

    Times are microseconds inside the analysed window: from the first to the last GPU event left
    after HTA's convention of dropping the last ProfilerStep (see `gpu_work`).
    """

    rank: int | None
    world_size: int | None
    file: str
    gpu_name: str | None
    device_properties: dict[str, Any]
    window_start_us: float
    window_end_us: float
    kernel_time_us: float
    idle_us: float
    compute_us: float
    non_compute_us: float
    idle_pct: float
    compute_pct: float
    non_compute_pct: float
    category_time_us: dict[str, float]
    top_kernels: list[KernelTotal]
    memcpy_bytes_by_kind: dict[str, int]
    communication_overlap_pct: float | None
    launch_gap_stream: int | None
    launch_gap_count: int
    launch_gap_total_us: float
    launch_gap_p50_us: float | None
    peak_allocated_bytes: int | None
    peak_reserved_bytes: int | None
    profiler_steps: int
    gpu_event_count: int
    cpu_only: bool
    ns_rounding_used: bool
    last_step_dropped: bool = False


@dataclass(frozen=True)
class TraceSummary:
    ranks: list[RankSummary]
    files: list[str]
    warnings: list[str] = field(default_factory=list)
