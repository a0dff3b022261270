"""What bounds a job, from its trace summaries: a verdict, how sure we are, and the evidence.

Shares are of the analysed window, averaged over ranks (see `window` for how it splits). The
rules, in order:

1. "mostly idle": idle >= 50 % and the mean launch gap >= 1 ms. Half of the paid GPU time
   runs nothing, in long stretches: the host is loading data, computing on the CPU, waiting on
   a sync, or the job does not need the GPU much. A faster GPU cannot help; a smaller one costs
   less for the same work.
2. "host/launch-bound": idle >= 25 %. A quarter of the window waiting on the host is the
   largest single cost left in such a trace. Short gaps (mean under 1 ms) mean kernels are
   launched more slowly than they run (CUDA graphs, torch.compile, larger batches help); long
   ones below the 50 % mark mean stalls. Either way the fix is on the host side.
3. "communication-bound": exposed communication >= 25 %: collectives running with no compute
   beside them. Faster links (an NVLink-class fabric instead of PCIe) or better overlap help;
   faster math does not. When idle and exposed communication both pass 25 % (rules 2 and 3),
   the larger share decides.
4. Of the busy time left, "compute-bound" when matrix math (GEMM, convolution, attention) takes
   at least as long as bandwidth-bound work (elementwise, normalisation, reductions, copies),
   else "memory-bound": the first scales with a GPU's TFLOPS, the second with its GB/s, so
   this says which figure to shop for.

The mean gap (all gap time over the number of gaps), not the median, tells short from long: a
trace idle 99 % of the time in a few multi-second stalls has a median gap of a few hundred
microseconds among its many short ones, yet its idle time is all in the stalls.

The same 50 % and 25 % marks are used for every rule so that each verdict names the part that
takes the largest share. nvidia-smi logs alone cannot see kernels: idle is 100 % minus the mean
utilisation (rules 1 and 2, with no gap data a 50 % idle log is "mostly idle"), rule 3 cannot be
checked, and rule 4 uses utilization.memory: the memory controller busy >= 50 % of the time is
"memory-bound", otherwise "compute-bound".

Confidence: the margin is the distance, in percentage points, of the deciding share from the
thresholds it crossed and the ones it stayed under. 15 points or more: "high"; 5 or more:
"medium"; less: "low". One level lower when the evidence is thin (fewer than 100 GPU events or a
window under 10 ms: a micro-benchmark, or fewer than 60 nvidia-smi samples), and never above
"medium" from nvidia-smi alone.
"""

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from advisor.domain.rightsizing.measured import MeasuredRank
from advisor.domain.rightsizing.observed import KERNEL_SOURCES
from advisor.domain.rightsizing.window import WindowSplit, mean_split, split_window

IDLE_MOSTLY_PCT = 50.0
IDLE_HOST_PCT = 25.0
LONG_GAP_US = 1000.0
EXPOSED_COMMUNICATION_PCT = 25.0
MEMORY_CONTROLLER_BUSY_PCT = 50.0
HIGH_MARGIN_PCT = 15.0
MEDIUM_MARGIN_PCT = 5.0
THIN_EVENTS = 100
THIN_WINDOW_US = 10_000.0
THIN_SAMPLES = 60
_LEVELS = ("low", "medium", "high")


@dataclass(frozen=True)
class Evidence:
    name: str
    value: float | int | None
    unit: str
    note: str = ""


@dataclass(frozen=True)
class Verdict:
    # mostly idle | host/launch-bound | communication-bound | memory-bound | compute-bound
    kind: str
    confidence: str  # high | medium | low
    evidence: list[Evidence] = field(default_factory=list)
    rule: str = ""  # the rule that decided, in words


def verdict(
    ranks: Sequence[MeasuredRank], *, device_bandwidth_gb_s: float | None = None
) -> Verdict:
    """Judge the job; device_bandwidth_gb_s (the catalogue's figure for the GPU it ran on) puts
    achieved copy bandwidth in proportion. ValueError when no rank saw GPU work."""
    gpu_ranks = [rank for rank in ranks if not rank.cpu_only and rank.kernel_time_us > 0]
    detailed = [rank for rank in gpu_ranks if rank.source in KERNEL_SOURCES]
    logs = [rank for rank in gpu_ranks if rank.source == "nvidia-smi"]
    # GPUs that never showed utilisation ran nothing of the job (the node finding names them).
    logs = [rank for rank in logs if rank.utilization_mean_pct != 0] or logs
    evidence: list[Evidence] = []
    if logs:
        evidence.extend(_log_evidence(logs))
    if detailed:
        kind, margin, rule = _judge_kernels(detailed, evidence, device_bandwidth_gb_s)
        thin = (
            sum(rank.gpu_event_count for rank in detailed) < THIN_EVENTS
            or statistics.fmean(rank.kernel_time_us for rank in detailed) < THIN_WINDOW_US
        )
        ceiling = "high"
    elif logs:
        kind, margin, rule = _judge_utilisation(logs)
        thin = min(rank.samples for rank in logs) < THIN_SAMPLES
        ceiling = "medium"
    else:
        raise ValueError("no rank with GPU work to judge")
    return Verdict(kind, _confidence(margin, thin=thin, ceiling=ceiling), evidence, rule)


def _judge_kernels(
    ranks: Sequence[MeasuredRank], evidence: list[Evidence], bandwidth_gb_s: float | None
) -> tuple[str, float, str]:
    split = mean_split([split_window(rank) for rank in ranks])
    idle = statistics.fmean(rank.idle_pct for rank in ranks)
    gap_count = sum(rank.launch_gap_count for rank in ranks)
    gap_mean_us = sum(rank.launch_gap_total_us for rank in ranks) / gap_count if gap_count else None
    exposed = split.pct(split.communication_s)
    math = split.pct(split.math_s)
    memory_side = split.pct(split.memory_kernels_s + split.copies_s)
    evidence.extend(_kernel_evidence(ranks, split, idle, gap_mean_us, bandwidth_gb_s))
    long_gaps = gap_mean_us is None or gap_mean_us >= LONG_GAP_US
    if idle >= IDLE_MOSTLY_PCT and long_gaps:
        return "mostly idle", idle - IDLE_MOSTLY_PCT, f"idle {idle:.0f} % in long gaps"
    if idle >= IDLE_HOST_PCT and idle >= exposed:
        how = "long stalls" if long_gaps else "short launch gaps"
        margin = min(idle - IDLE_HOST_PCT, idle - exposed)
        return "host/launch-bound", margin, f"idle {idle:.0f} %, {how}"
    if exposed >= EXPOSED_COMMUNICATION_PCT:
        margin = min(exposed - EXPOSED_COMMUNICATION_PCT, exposed - idle)
        return "communication-bound", margin, f"exposed communication {exposed:.0f} %"
    math_of_busy = 100 * math / (math + memory_side) if math + memory_side > 0 else 50.0
    margin = min(abs(math_of_busy - 50), IDLE_HOST_PCT - idle, EXPOSED_COMMUNICATION_PCT - exposed)
    kind = "compute-bound" if math_of_busy >= 50 else "memory-bound"
    return kind, margin, f"matrix math is {math_of_busy:.0f} % of the busy compute and copy time"


def _judge_utilisation(logs: Sequence[MeasuredRank]) -> tuple[str, float, str]:
    means = [rank.utilization_mean_pct for rank in logs if rank.utilization_mean_pct is not None]
    if not means:
        raise ValueError("nvidia-smi never reported utilization.gpu")
    idle = 100 - statistics.fmean(means)
    if idle >= IDLE_MOSTLY_PCT:
        return "mostly idle", idle - IDLE_MOSTLY_PCT, f"mean utilisation {100 - idle:.0f} %"
    if idle >= IDLE_HOST_PCT:
        margin = min(idle - IDLE_HOST_PCT, IDLE_MOSTLY_PCT - idle)
        return "host/launch-bound", margin, f"mean utilisation {100 - idle:.0f} %"
    memory = [
        rank.memory_utilization_mean_pct
        for rank in logs
        if rank.memory_utilization_mean_pct is not None
    ]
    if not memory:
        return "compute-bound", 0.0, "busy, and nvidia-smi cannot tell compute from memory"
    busy = statistics.fmean(memory)
    margin = min(abs(busy - MEMORY_CONTROLLER_BUSY_PCT), IDLE_HOST_PCT - idle)
    kind = "memory-bound" if busy >= MEMORY_CONTROLLER_BUSY_PCT else "compute-bound"
    return kind, margin, f"memory controller busy {busy:.0f} % of the time"


def _confidence(margin: float, *, thin: bool, ceiling: str) -> str:
    level = 2 if margin >= HIGH_MARGIN_PCT else 1 if margin >= MEDIUM_MARGIN_PCT else 0
    level = max(level - (1 if thin else 0), 0)
    return _LEVELS[min(level, _LEVELS.index(ceiling))]


def _kernel_evidence(
    ranks: Sequence[MeasuredRank],
    split: WindowSplit,
    idle: float,
    gap_mean_us: float | None,
    bandwidth_gb_s: float | None,
) -> list[Evidence]:
    gap_share = statistics.fmean(
        100 * rank.launch_gap_total_us / rank.kernel_time_us for rank in ranks
    )
    overlaps = [
        rank.communication_overlap_pct
        for rank in ranks
        if rank.communication_overlap_pct is not None
    ]
    communication = statistics.fmean(
        100 * rank.category_time_us.get("communication", 0.0) / rank.kernel_time_us
        for rank in ranks
    )
    return [
        Evidence("idle share", idle, "%", "no kernel or copy running: the GPU waits on the host"),
        Evidence(
            "launch gaps",
            gap_share,
            "%",
            "gaps over 10 us between kernels on the busiest stream, as a share of the window",
        ),
        Evidence(
            "mean launch gap",
            gap_mean_us,
            "us",
            "under 1 ms: launch overhead; longer: the host stalls (data loading, syncs)",
        ),
        Evidence(
            "matrix math",
            split.pct(split.math_s),
            "%",
            "GEMM, convolution and attention kernels: bound by TFLOPS",
        ),
        Evidence(
            "bandwidth-bound kernels",
            split.pct(split.memory_kernels_s),
            "%",
            "elementwise, normalisation and reduction kernels: bound by GB/s",
        ),
        Evidence("memory copies", split.pct(split.copies_s), "%", "memcpy and memset, exposed"),
        Evidence("communication", communication, "%", "collective kernels, overlapped or not"),
        Evidence(
            "exposed communication",
            split.pct(split.communication_s),
            "%",
            "collectives with no compute beside them",
        ),
        Evidence(
            "communication overlap",
            statistics.fmean(overlaps) if overlaps else None,
            "%",
            "share of communication time hidden behind compute",
        ),
        *_copy_bandwidth(ranks, bandwidth_gb_s),
    ]


def _copy_bandwidth(ranks: Sequence[MeasuredRank], bandwidth_gb_s: float | None) -> list[Evidence]:
    copied_bytes: Counter[str] = Counter()
    copy_us: Counter[str] = Counter()
    for rank in ranks:
        copied_bytes.update(rank.memcpy_bytes_by_kind)
        copy_us.update(rank.memcpy_us_by_kind)
    found = []
    for kind in sorted(copied_bytes):
        if copy_us[kind] <= 0:
            continue
        achieved_gb_s = copied_bytes[kind] / (copy_us[kind] * 1e3)
        if bandwidth_gb_s is None:
            note = "device bandwidth not given"
        elif kind == "DtoD":
            # A device-to-device copy reads and writes every byte: half the peak is its ceiling.
            note = f"{100 * achieved_gb_s / bandwidth_gb_s:.0f} % of the {bandwidth_gb_s:g} GB/s "
            note += "device bandwidth (a copy reads and writes each byte: 50 % is the ceiling)"
        else:
            note = f"{100 * achieved_gb_s / bandwidth_gb_s:.1f} % of the {bandwidth_gb_s:g} GB/s "
            note += "device bandwidth; copies to or from the host are bounded by PCIe instead"
        found.append(Evidence(f"{kind} copy bandwidth", achieved_gb_s, "GB/s", note))
    return found


def _log_evidence(logs: Sequence[MeasuredRank]) -> list[Evidence]:
    def mean(values: list[float | None]) -> float | None:
        known = [value for value in values if value is not None]
        return statistics.fmean(known) if known else None

    peaks = [rank.peak_memory_used_bytes for rank in logs if rank.peak_memory_used_bytes]
    return [
        Evidence(
            "mean utilisation",
            mean([rank.utilization_mean_pct for rank in logs]),
            "%",
            "nvidia-smi utilization.gpu: share of time any kernel ran",
        ),
        Evidence("p95 utilisation", mean([rank.utilization_p95_pct for rank in logs]), "%"),
        Evidence(
            "time below 10 % utilisation",
            mean([rank.low_utilization_pct for rank in logs]),
            "%",
        ),
        Evidence(
            "memory controller busy",
            mean([rank.memory_utilization_mean_pct for rank in logs]),
            "%",
            "nvidia-smi utilization.memory",
        ),
        Evidence("peak memory used", max(peaks) if peaks else None, "bytes", "nvidia-smi"),
    ]
