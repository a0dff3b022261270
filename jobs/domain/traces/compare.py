"""Top operators of a trace, and two trace jobs side by side (before and after a change).

A job's figures are the mean over its kernel-level ranks (`prescriptions.kernel_ranks`), so a
job profiled on 8 ranks compares with one profiled on 1. Kernel times are per step when both
jobs mark steps (they may have profiled different numbers of steps), else over the window.
"""

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from jobs.domain.traces.prescriptions import idle_split, kernel_ranks
from jobs.domain.traces.summary import RankSummary

TOP_OPERATORS = 10


@dataclass(frozen=True)
class KernelShare:
    name: str
    category: str
    count: int
    total_us: float
    share_pct: float  # of all GPU event time (kernels, copies, syncs), summed not merged


def gpu_time_us(rank: RankSummary) -> float:
    return sum(rank.category_time_us.values())


def top_operators(rank: RankSummary, limit: int = TOP_OPERATORS) -> list[KernelShare]:
    """The rank's top kernels by GPU time, each with its share of the rank's GPU time."""
    total_us = gpu_time_us(rank)
    return [
        KernelShare(
            kernel.name,
            kernel.category,
            kernel.count,
            kernel.total_us,
            100 * kernel.total_us / total_us if total_us > 0 else 0.0,
        )
        for kernel in rank.top_kernels[:limit]
    ]


@dataclass(frozen=True)
class MetricRow:
    label: str
    unit: str  # "%" or "ms"
    before: float | None
    after: float | None

    @property
    def change(self) -> float | None:
        if self.before is None or self.after is None:
            return None
        return self.after - self.before

    @property
    def change_pct(self) -> float | None:
        """The relative change, for times; None for shares (their change is in points)."""
        if self.unit != "ms" or not self.before or self.after is None:
            return None
        return 100 * (self.after - self.before) / self.before


@dataclass(frozen=True)
class KernelRow:
    name: str
    category: str
    before_ms: float | None  # None: not among that job's top kernels
    after_ms: float | None
    before_share_pct: float | None
    after_share_pct: float | None

    @property
    def change_ms(self) -> float | None:
        if self.before_ms is None or self.after_ms is None:
            return None
        return self.after_ms - self.before_ms


@dataclass(frozen=True)
class Comparison:
    metrics: list[MetricRow]
    kernels: list[KernelRow]
    per_step: bool  # kernel times are per step (else over each job's window)


def _mean(ranks: Sequence[RankSummary], value: Callable[[RankSummary], float | None]):
    known = [v for rank in ranks if (v := value(rank)) is not None]
    return statistics.fmean(known) if known else None


def _ms(value_us: float | None) -> float | None:
    return None if value_us is None else value_us / 1000


def _host_wait_pct(rank: RankSummary) -> float | None:
    split = idle_split(rank)
    return None if split is None else split.idle_pct * split.host_wait_pct / 100


def _metrics(ranks: Sequence[RankSummary]) -> dict[str, float | None]:
    return {
        "step": _ms(_mean(ranks, lambda r: r.step_mean_us)),
        "spread": _ms(_mean(ranks, lambda r: r.step_stdev_us if r.step_count >= 2 else None)),
        "idle": _mean(ranks, lambda r: r.idle_pct),
        "host_wait": _mean(ranks, _host_wait_pct),
        "compute": _mean(ranks, lambda r: r.compute_pct),
        "communication": _mean(
            ranks, lambda r: 100 * r.category_time_us.get("communication", 0.0) / r.kernel_time_us
        ),
        "non_compute": _mean(ranks, lambda r: r.non_compute_pct),
        "window": _ms(_mean(ranks, lambda r: r.kernel_time_us)),
    }


_METRICS = (
    ("step", "Step time (mean)", "ms"),
    ("spread", "Step time spread (standard deviation)", "ms"),
    ("idle", "GPU idle", "%"),
    ("host_wait", "GPU idle waiting on the host", "%"),
    ("compute", "Compute", "%"),
    ("communication", "Communication (collectives, overlapped or not)", "%"),
    ("non_compute", "Non-compute (communication, copies, syncs)", "%"),
    ("window", "Analysed window", "ms"),
)


def _kernel_times(ranks: Sequence[RankSummary], per_step: bool) -> dict[str, tuple[str, float]]:
    """Top kernel name -> (category, mean ms per rank, per step when asked)."""
    times: dict[str, tuple[str, float]] = {}
    for rank in ranks:
        scale = rank.step_count if per_step else 1
        for kernel in rank.top_kernels:
            category, so_far = times.get(kernel.name, (kernel.category, 0.0))
            times[kernel.name] = (category, so_far + kernel.total_us / 1000 / scale / len(ranks))
    return times


def _shares(ranks: Sequence[RankSummary]) -> dict[str, float]:
    shares: dict[str, float] = {}
    for rank in ranks:
        for kernel in top_operators(rank):
            shares[kernel.name] = shares.get(kernel.name, 0.0) + kernel.share_pct / len(ranks)
    return shares


def compare_jobs(before: Sequence[RankSummary], after: Sequence[RankSummary]) -> Comparison:
    """Job `before` against job `after`: each metric of both, and the top kernels of either
    (the TOP_OPERATORS largest in whichever job ran them longer)."""
    old, new = kernel_ranks(before), kernel_ranks(after)
    old_metrics, new_metrics = _metrics(old), _metrics(new)
    metrics = [
        MetricRow(label, unit, old_metrics[key], new_metrics[key])
        for key, label, unit in _METRICS
        if old_metrics[key] is not None or new_metrics[key] is not None
    ]
    per_step = bool(old and new) and all(rank.step_count for rank in [*old, *new])
    old_times, new_times = _kernel_times(old, per_step), _kernel_times(new, per_step)
    old_shares, new_shares = _shares(old), _shares(new)
    names = sorted(
        {*old_times, *new_times},
        key=lambda name: (
            -max(old_times.get(name, ("", 0.0))[1], new_times.get(name, ("", 0.0))[1]),
            name,
        ),
    )[:TOP_OPERATORS]
    kernels = [
        KernelRow(
            name,
            (old_times.get(name) or new_times[name])[0],
            old_times[name][1] if name in old_times else None,
            new_times[name][1] if name in new_times else None,
            old_shares.get(name),
            new_shares.get(name),
        )
        for name in names
    ]
    return Comparison(metrics, kernels, per_step)
