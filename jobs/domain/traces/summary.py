"""What an analysis returns: one summary per rank, plus the upload's files and warnings.

Three sources fill the same RankSummary: PyTorch profiler (Kineto) traces, Nsight Systems SQLite
exports (one summary per GPU in the export) and nvidia-smi CSV logs (one per GPU index). Fields
added after the first release have defaults, so older stored reports still load.
"""

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
    """Holistic-Trace-Analysis-style metrics for one rank (one trace file, or one GPU of an
    Nsight export or nvidia-smi log: `source` says which).

    Times are microseconds inside the analysed window: from the first to the last GPU event left
    after HTA's convention of dropping the last ProfilerStep (see `gpu_work`). For nvidia-smi the
    window is the logged period, `rank` is the GPU index, and busy time is derived from
    utilization.gpu (it cannot be split by kernel kind, so it is all counted as compute).
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
    source: str = "kineto"  # kineto | nsys | nvidia-smi
    # Wall time covered by matrix-math kernels (GEMM, convolution, attention); the rest of
    # compute_us is elementwise, normalisation and reduction work, which memory bandwidth bounds.
    math_us: float = 0.0
    # Matrix-math kernel time (summed, not merged) by the precision their names reveal.
    math_time_by_precision_us: dict[str, float] = field(default_factory=dict)
    memcpy_us_by_kind: dict[str, float] = field(default_factory=dict)
    # nvidia-smi only: device memory in use as the driver reports it (memory.used), and the
    # utilisation statistics and chart series (at most 500 points each, seconds from the start).
    peak_memory_used_bytes: int | None = None
    samples: int = 0
    duration_s: float | None = None
    utilization_mean_pct: float | None = None
    utilization_p95_pct: float | None = None
    low_utilization_s: float | None = None
    low_utilization_pct: float | None = None
    memory_utilization_mean_pct: float | None = None
    power_mean_w: float | None = None
    utilization_series: list[tuple[float, float]] = field(default_factory=list)
    memory_series: list[tuple[float, int]] = field(default_factory=list)
    # Kernels only (computation and collectives), not copies, memsets or syncs; 0 for
    # nvidia-smi, which sees no kernels.
    kernel_count: int = 0
    # Time of computation kernels whose names say double precision (`kernels.names_fp64`).
    fp64_time_us: float = 0.0
    # Every GPU the file says the machine had, used or not (`metrics.gpus_present`): Kineto's
    # deviceProperties, nsys's TARGET_INFO_GPU, nvidia-smi's indices.
    gpus_present: list[dict[str, Any]] = field(default_factory=list)
    # Idle time by cause, HTA's idle time breakdown (`idle`); they add up to idle_us. None where
    # the format records no kernel launches (nsys, nvidia-smi).
    idle_host_wait_us: float | None = None
    idle_kernel_wait_us: float | None = None
    idle_other_us: float | None = None
    # Wall time per ProfilerStep (`step_times`), over the same steps as the GPU window.
    step_count: int = 0
    step_mean_us: float | None = None
    step_stdev_us: float | None = None
    step_min_us: float | None = None
    step_slowest_name: str | None = None
    step_slowest_us: float | None = None
    step_times_us: list[tuple[str, float]] = field(default_factory=list)
    # Batch fetches the training loop waited on (`enumerate(DataLoader)#...` spans) and the
    # iterator classes that served them: _SingleProcessDataLoaderIter means num_workers=0.
    dataloader_calls: int = 0
    dataloader_us: float = 0.0
    dataloader_iterators: list[str] = field(default_factory=list)
    # Copies from pageable (not pinned) host memory: staged through a bounce buffer, and they
    # block the host thread. DataLoader(pin_memory=True) makes them pinned.
    pageable_copy_us: float = 0.0


@dataclass(frozen=True)
class TraceSummary:
    ranks: list[RankSummary]
    files: list[str]
    warnings: list[str] = field(default_factory=list)
