"""How a rank's analysed window splits into parts that another GPU would speed up differently.

From the trace breakdown (the jobs app's, read as `measured.MeasuredRank`):

- idle_us: nothing ran on the GPU; the host was busy elsewhere or launching;
- compute_us (wall time covered by computation kernels) = math_us (GEMM, convolution,
  attention: bound by tensor-core throughput) + the rest (elementwise, normalisation,
  reductions: a few operations per byte, bound by memory bandwidth);
- non_compute_us (GPU busy, but no computation kernel running) is shared out between
  communication, memory copies and "other" (stream and event syncs) in proportion to their
  summed kernel times. The breakdown does not say which of them ran in that time; proportional
  is the neutral guess, and it makes communication mean *exposed* communication: the part
  hidden behind compute is not in non_compute_us at all.

An nvidia-smi log has no kernels: its busy time is `unattributed_s`, its idle time idle.
"""

from collections.abc import Sequence
from dataclasses import dataclass, fields

from advisor.domain.rightsizing.measured import MeasuredRank

_US_PER_S = 1e6


@dataclass(frozen=True)
class WindowSplit:
    """Seconds of one window (or their mean over ranks); the parts add up to window_s."""

    window_s: float
    math_s: float
    memory_kernels_s: float
    copies_s: float
    communication_s: float
    sync_s: float
    idle_s: float
    unattributed_s: float

    def pct(self, part_s: float) -> float:
        return 100 * part_s / self.window_s if self.window_s > 0 else 0.0


def split_window(rank: MeasuredRank) -> WindowSplit:
    window_s = rank.kernel_time_us / _US_PER_S
    idle_s = rank.idle_us / _US_PER_S
    if rank.source == "nvidia-smi":
        return WindowSplit(window_s, 0.0, 0.0, 0.0, 0.0, 0.0, idle_s, window_s - idle_s)
    math_s = min(rank.math_us, rank.compute_us) / _US_PER_S
    categories = rank.category_time_us
    communication, copies, sync = (
        categories.get(name, 0.0) for name in ("communication", "memory", "other")
    )
    summed = communication + copies + sync
    non_compute_s = max(rank.non_compute_us, 0.0) / _US_PER_S

    def share(part: float) -> float:
        return non_compute_s * part / summed if summed > 0 else 0.0

    return WindowSplit(
        window_s=window_s,
        math_s=math_s,
        memory_kernels_s=rank.compute_us / _US_PER_S - math_s,
        copies_s=share(copies),
        communication_s=share(communication),
        sync_s=share(sync) if summed > 0 else non_compute_s,
        idle_s=idle_s,
        unattributed_s=0.0,
    )


def mean_split(splits: Sequence[WindowSplit]) -> WindowSplit:
    """Each part averaged over ranks: data-parallel ranks run the same steps side by side."""
    return WindowSplit(
        *(sum(getattr(s, f.name) for s in splits) / len(splits) for f in fields(WindowSplit))
    )


def per_step(split: WindowSplit, steps: int) -> WindowSplit:
    return WindowSplit(*(getattr(split, f.name) / steps for f in fields(WindowSplit)))
