"""What a measured job did, per step, in the terms the projection scales.

`observe` builds it from trace summaries: per rank, the window split (`window`) divided by the
steps it covers, then averaged over ranks. The precision is the one most matrix-math time ran
in, by kernel name; the peak memory the largest any rank or log reports.

The workload is "ml" when matrix math (GEMM, convolution, attention) ran in an ML precision.
A kernel trace without any, or whose matrix math is all FP64, is "non-ml" (scientific code such
as an FP64 saxpy): its computation kernels are not known to be bandwidth-bound elementwise work,
so all of them go to compute_s, and the projection scales them by the slower of bandwidth and
the FP32 or FP64 peak (`fp64`: most of their time is in kernels whose names say FP64). Logs
without kernel names (nvidia-smi) are "unknown". nvidia-smi GPUs that never showed any
utilisation ran nothing of the job and are left out (`working_ranks`).
"""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from advisor.domain.rightsizing.measured import MeasuredRank
from advisor.domain.rightsizing.window import mean_split, per_step, split_window

KERNEL_SOURCES = ("kineto", "nsys")
# What the projection assumes when kernel names do not tell: today's default for training.
ASSUMED_PRECISION = "bf16"


@dataclass(frozen=True)
class ObservedJob:
    """One step's seconds, split by what bounds them; the parts add up to step_s.

    compute_s: matrix math (tensor-core bound); memory_s: copies, memsets and bandwidth-bound
    kernels; communication_s: collectives not hidden behind compute; host_idle_s: the GPU
    waiting (idle, syncs); unattributed_s: busy time of unknown kind (nvidia-smi logs).
    When the trace marks no steps, step_s is the whole window (per_step False).
    """

    step_s: float
    compute_s: float
    memory_s: float
    communication_s: float
    host_idle_s: float
    precision: str  # bf16 | fp16 | tf32 | fp32 | fp8 | fp64 | unknown
    peak_memory_bytes: int | None
    gpu_count: int = 1
    unattributed_s: float = 0.0
    per_step: bool = True
    workload: str = "ml"  # ml | non-ml | unknown
    fp64: bool = False  # most computation-kernel time is in kernels named FP64

    @property
    def idle_pct(self) -> float:
        return 100 * self.host_idle_s / self.step_s if self.step_s > 0 else 0.0


def observe(ranks: Sequence[MeasuredRank]) -> ObservedJob:
    """The job behind an analysis: kernel-level ranks (Kineto, nsys) when there are any,
    otherwise nvidia-smi's GPUs. ValueError when no rank saw GPU work."""
    used = working_ranks(ranks)
    if not used:
        raise ValueError("no rank with GPU work to observe")
    split = mean_split([per_step(split_window(rank), _steps(rank)) for rank in used])
    world_sizes = [rank.world_size for rank in used if rank.world_size]
    precision = _precision(used)
    workload = _workload(used, precision)
    if workload == "non-ml":
        # Not known to be bandwidth-bound elementwise work: every computation kernel is compute.
        compute_s, memory_s = split.math_s + split.memory_kernels_s, split.copies_s
    else:
        compute_s, memory_s = split.math_s, split.memory_kernels_s + split.copies_s
    return ObservedJob(
        step_s=split.window_s,
        compute_s=compute_s,
        memory_s=memory_s,
        communication_s=split.communication_s,
        host_idle_s=split.idle_s + split.sync_s,
        unattributed_s=split.unattributed_s,
        precision=precision,
        peak_memory_bytes=_peak_memory_bytes(ranks),
        gpu_count=max(world_sizes) if world_sizes else len(used),
        per_step=all(rank.profiler_steps > 0 for rank in used),
        workload=workload,
        fp64=_mostly_fp64(used),
    )


def working_ranks(ranks: Sequence[MeasuredRank]) -> list[MeasuredRank]:
    """The ranks that did the job's GPU work: kernel-level ones (Kineto, nsys) when there are
    any, otherwise the nvidia-smi GPUs that were ever busy (all of them if none was)."""
    gpu_ranks = [rank for rank in ranks if not rank.cpu_only and rank.kernel_time_us > 0]
    detailed = [rank for rank in gpu_ranks if rank.source in KERNEL_SOURCES]
    if detailed:
        return detailed
    busy = [rank for rank in gpu_ranks if rank.utilization_mean_pct != 0]
    return busy or gpu_ranks


def _workload(ranks: Sequence[MeasuredRank], precision: str) -> str:
    if not any(rank.source in KERNEL_SOURCES for rank in ranks):
        return "unknown"
    matrix_us = sum(
        us
        for rank in ranks
        for name, us in rank.math_time_by_precision_us.items()
        if name != "fp64"
    )
    return "ml" if matrix_us > 0 and precision != "fp64" else "non-ml"


def _mostly_fp64(ranks: Sequence[MeasuredRank]) -> bool:
    compute_us = sum(rank.compute_us for rank in ranks)
    return compute_us > 0 and 2 * sum(rank.fp64_time_us for rank in ranks) > compute_us


def _steps(rank: MeasuredRank) -> int:
    """Steps inside the analysed window: all ProfilerSteps but the dropped last one."""
    return max(rank.profiler_steps - (1 if rank.last_step_dropped else 0), 1)


def _precision(ranks: Sequence[MeasuredRank]) -> str:
    time_us: Counter[str] = Counter()
    for rank in ranks:
        time_us.update(rank.math_time_by_precision_us)
    known = {precision: us for precision, us in time_us.items() if precision != "unknown"}
    return max(known, key=known.__getitem__) if known else "unknown"


def _peak_memory_bytes(ranks: Sequence[MeasuredRank]) -> int | None:
    """The caching allocator's reserved peak is what the GPU had to hold; allocated is a lower
    bound; nvidia-smi's memory.used also counts the CUDA context. The largest of any wins."""
    peaks = [
        peak
        for rank in ranks
        for peak in (
            rank.peak_reserved_bytes,
            rank.peak_allocated_bytes,
            rank.peak_memory_used_bytes,
        )
        if peak
    ]
    return max(peaks) if peaks else None
