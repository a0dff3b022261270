"""What to fix in the job, from its trace: concrete changes, each with the evidence behind it.

The advisor's verdict says what bounds the job (`advisor.domain.rightsizing.verdict`); this
module turns it into fixes, reading the same summaries (`facts_of` averages the kernel-level
ranks). Each fix names what to change and the figures that call for it. The rules:

- Host side (verdict "host/launch-bound" or "mostly idle", or idle >= 25 % whatever the verdict).
  The idle time is split by cause as HTA splits it (`idle`: host wait, kernel wait, other).
  * DataLoader: batches are fetched on the main thread (a `_SingleProcessDataLoaderIter`, i.e.
    num_workers=0) or a fetch takes >= 10 % of the step. Fix: num_workers, pin_memory,
    prefetch_factor, persistent_workers.
  * Pinned memory: host-to-device copies from pageable memory, when the DataLoader fix does not
    already set pin_memory.
  * Launch overhead: kernel wait >= 25 % of the idle time, or host wait >= 50 % of it with no
    slow DataLoader to blame, or kernels averaging under 10 us. Fix: CUDA graphs,
    torch.compile, larger batches.
  * Syncs: "other" wait >= 50 % of the idle time: kernels were queued in time yet waited,
    usually on another stream's event or a host-device sync.
- Communication ("communication-bound", or exposed collectives >= 25 % of the window):
  overlap compute and communication; DDP bucket sizes (bucket_cap_mb); with more than one rank,
  fewer ranks over PCIe (or an NVLink machine).
- Memory ("memory-bound"): fusion (torch.compile, fused optimizers); lower precision.
- Compute ("compute-bound"): lower precision when matrix math runs in FP32; else the GPU does
  useful math and only a faster GPU helps.

Fixes matching the verdict come first; the first fix is the report's "what to fix first".
"""

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from jobs.domain.traces.kernels import is_matrix_math
from jobs.domain.traces.summary import RankSummary

IDLE_HOST_PCT = 25.0
DATALOADER_STEP_PCT = 10.0
KERNEL_WAIT_OF_IDLE_PCT = 25.0
HOST_WAIT_OF_IDLE_PCT = 50.0
OTHER_WAIT_OF_IDLE_PCT = 50.0
SHORT_KERNEL_US = 10.0
EXPOSED_COMMUNICATION_PCT = 25.0
FP32_MATH_PCT = 50.0
KERNEL_SOURCES = ("kineto", "nsys")
HOST_VERDICTS = ("host/launch-bound", "mostly idle")


@dataclass(frozen=True)
class IdleSplit:
    """Idle time as a share of the window, and its causes as shares of the idle time."""

    idle_pct: float
    host_wait_pct: float
    kernel_wait_pct: float
    other_pct: float


@dataclass(frozen=True)
class TraceFacts:
    """The figures the rules read, averaged over the kernel-level ranks."""

    idle_pct: float
    idle_split: IdleSplit | None
    step_mean_us: float | None
    fetch_mean_us: float | None  # one DataLoader batch fetch
    main_thread_loading: bool  # a single-process DataLoader iterator fetched the batches
    pageable_copy_us: float
    kernels_per_step: float | None
    mean_kernel_us: float | None
    communication_pct: float
    communication_overlap_pct: float | None
    exposed_communication_pct: float
    collective_calls: int
    world_size: int | None
    math_pct_of_busy: float | None  # matrix math's share of compute kernel time
    fp32_math_pct: float | None  # FP32's share of matrix-math time
    top_bandwidth_kernel: str | None


@dataclass(frozen=True)
class Fix:
    key: str  # dataloader | pin-memory | launch-overhead | syncs | overlap | buckets | ...
    title: str
    actions: list[str]
    evidence: str


@dataclass(frozen=True)
class Prescription:
    facts: TraceFacts | None
    fixes: list[Fix] = field(default_factory=list)

    @property
    def first(self) -> Fix | None:
        return self.fixes[0] if self.fixes else None


def kernel_ranks(ranks: Sequence[RankSummary]) -> list[RankSummary]:
    return [
        rank
        for rank in ranks
        if rank.source in KERNEL_SOURCES and not rank.cpu_only and rank.kernel_time_us > 0
    ]


def _mean(values: Sequence[float | None]) -> float | None:
    known = [value for value in values if value is not None]
    return statistics.fmean(known) if known else None


def idle_split(rank: RankSummary) -> IdleSplit | None:
    parts = (rank.idle_host_wait_us, rank.idle_kernel_wait_us, rank.idle_other_us)
    if any(part is None for part in parts):
        return None
    host_us, kernel_us, other_us = (float(part or 0.0) for part in parts)
    idle_us = host_us + kernel_us + other_us

    def of_idle(part_us: float) -> float:
        return 100 * part_us / idle_us if idle_us > 0 else 0.0

    return IdleSplit(rank.idle_pct, of_idle(host_us), of_idle(kernel_us), of_idle(other_us))


def facts_of(ranks: Sequence[RankSummary]) -> TraceFacts | None:
    """None when no rank saw kernels (nvidia-smi logs alone)."""
    used = kernel_ranks(ranks)
    if not used:
        return None
    splits = [split for rank in used if (split := idle_split(rank)) is not None]
    calls = sum(rank.dataloader_calls for rank in used)
    kernel_busy_us = sum(
        rank.category_time_us.get("computation", 0.0)
        + rank.category_time_us.get("communication", 0.0)
        for rank in used
    )
    kernels = sum(rank.kernel_count for rank in used)
    steps = sum(rank.step_count for rank in used)
    communication = statistics.fmean(
        100 * rank.category_time_us.get("communication", 0.0) / rank.kernel_time_us for rank in used
    )
    overlap = _mean([rank.communication_overlap_pct for rank in used])
    math_us = sum(rank.math_us for rank in used)
    compute_us = sum(rank.compute_us for rank in used)
    precision_us: dict[str, float] = {}
    for rank in used:
        for precision, time_us in rank.math_time_by_precision_us.items():
            precision_us[precision] = precision_us.get(precision, 0.0) + time_us
    math_total_us = sum(precision_us.values())
    bandwidth = [
        kernel
        for rank in used
        for kernel in rank.top_kernels
        if kernel.category == "computation" and not is_matrix_math(kernel.name)
    ]
    return TraceFacts(
        idle_pct=statistics.fmean(rank.idle_pct for rank in used),
        idle_split=IdleSplit(
            statistics.fmean(s.idle_pct for s in splits),
            statistics.fmean(s.host_wait_pct for s in splits),
            statistics.fmean(s.kernel_wait_pct for s in splits),
            statistics.fmean(s.other_pct for s in splits),
        )
        if splits
        else None,
        step_mean_us=_mean([rank.step_mean_us for rank in used]),
        fetch_mean_us=sum(rank.dataloader_us for rank in used) / calls if calls else None,
        main_thread_loading=any(
            iterator.startswith("_SingleProcess")
            for rank in used
            for iterator in rank.dataloader_iterators
        ),
        pageable_copy_us=sum(rank.pageable_copy_us for rank in used) / len(used),
        kernels_per_step=kernels / steps if steps else None,
        mean_kernel_us=kernel_busy_us / kernels if kernels else None,
        communication_pct=communication,
        communication_overlap_pct=overlap,
        exposed_communication_pct=communication * (1 - (overlap or 0.0) / 100),
        collective_calls=sum(
            kernel.count
            for rank in used
            for kernel in rank.top_kernels
            if kernel.category == "communication"
        )
        // len(used),
        world_size=max((rank.world_size or 0 for rank in used), default=0) or None,
        math_pct_of_busy=100 * math_us / compute_us if compute_us > 0 else None,
        fp32_math_pct=100 * precision_us.get("fp32", 0.0) / math_total_us
        if math_total_us > 0
        else None,
        top_bandwidth_kernel=max(bandwidth, key=lambda kernel: kernel.total_us).name
        if bandwidth
        else None,
    )


def prescribe(ranks: Sequence[RankSummary], verdict_kind: str | None) -> Prescription:
    """The fixes for a job, most relevant to its verdict first."""
    facts = facts_of(ranks)
    if facts is None:
        return Prescription(None, [])
    host = _host_fixes(facts)
    communication = _communication_fixes(facts)
    memory = _memory_fixes(facts, verdict_kind)
    if verdict_kind in HOST_VERDICTS:
        ordered = [*host, *communication, *memory]
    elif verdict_kind == "communication-bound":
        ordered = [*communication, *host, *memory]
    else:
        ordered = [*memory, *host, *communication]
    return Prescription(facts, ordered)


def _ms(time_us: float) -> str:
    return f"{time_us / 1000:.1f} ms" if time_us < 10_000 else f"{time_us / 1000:.0f} ms"


def idle_sentence(facts: TraceFacts) -> str:
    split = facts.idle_split
    where = "of the step" if facts.step_mean_us else "of the window"
    if split is None:
        return f"GPU idle {facts.idle_pct:.0f}% {where}"
    return (
        f"GPU idle {facts.idle_pct:.0f}% {where}, {split.host_wait_pct:.0f}% of it waiting on "
        f"the host ({split.kernel_wait_pct:.0f}% kernel wait, {split.other_pct:.0f}% other)"
    )


def _host_fixes(facts: TraceFacts) -> list[Fix]:
    split = facts.idle_split
    if facts.idle_pct < IDLE_HOST_PCT:
        return []
    fixes = []
    idle = idle_sentence(facts)
    fetch_pct = (
        100 * facts.fetch_mean_us / facts.step_mean_us
        if facts.fetch_mean_us is not None and facts.step_mean_us
        else None
    )
    slow_loading = facts.main_thread_loading or (
        fetch_pct is not None and fetch_pct >= DATALOADER_STEP_PCT
    )
    if slow_loading:
        how = (
            "the trace shows data loading on the main thread (_SingleProcessDataLoaderIter: "
            "num_workers=0)"
            if facts.main_thread_loading
            else "fetching a batch is slow even with worker processes"
        )
        share = (
            f", {_ms(facts.fetch_mean_us or 0.0)} of each {_ms(facts.step_mean_us or 0.0)} step"
            if fetch_pct is not None
            else ""
        )
        pageable = (
            f"; {_ms(facts.pageable_copy_us)} of host-to-device copies from pageable memory"
            if facts.pageable_copy_us > 0
            else ""
        )
        fixes.append(
            Fix(
                "dataloader",
                "Load batches in DataLoader worker processes",
                [
                    "num_workers=4 to 8 (about one per CPU core you can spare per GPU)",
                    "pin_memory=True, and .to(device, non_blocking=True) on the batch",
                    "prefetch_factor=2 to 4 (batches each worker keeps ready)",
                    "persistent_workers=True (workers survive between epochs)",
                ],
                f"{idle}; DataLoader workers: {how}{share}{pageable}",
            )
        )
    elif facts.pageable_copy_us > 0:
        fixes.append(
            Fix(
                "pin-memory",
                "Copy batches from pinned memory",
                [
                    "DataLoader(pin_memory=True), or tensor.pin_memory() for batches you build",
                    ".to(device, non_blocking=True) so the copy overlaps compute",
                ],
                f"{idle}; {_ms(facts.pageable_copy_us)} of host-to-device copies come from "
                "pageable memory",
            )
        )
    kernel_wait = split is not None and split.kernel_wait_pct >= KERNEL_WAIT_OF_IDLE_PCT
    host_wait = split is not None and split.host_wait_pct >= HOST_WAIT_OF_IDLE_PCT
    short_kernels = facts.mean_kernel_us is not None and facts.mean_kernel_us < SHORT_KERNEL_US
    if kernel_wait or (host_wait and not slow_loading) or short_kernels:
        per_step = (
            f"{facts.kernels_per_step:,.0f} kernels per step, " if facts.kernels_per_step else ""
        )
        size = f"{facts.mean_kernel_us:.0f} us each on average" if facts.mean_kernel_us else ""
        not_loading = (
            f"; the DataLoader is not it ({_ms(facts.fetch_mean_us)} per batch)"
            if facts.fetch_mean_us is not None and not slow_loading
            else ""
        )
        fixes.append(
            Fix(
                "launch-overhead",
                "Launch fewer, larger kernels",
                [
                    "CUDA graphs (torch.cuda.graphs, or torch.compile(mode='reduce-overhead'))",
                    "torch.compile to fuse small kernels",
                    "a larger batch per step, if memory allows",
                ],
                f"{idle}{not_loading}; {per_step}{size}: the CPU cannot enqueue work as fast "
                "as the GPU finishes it",
            )
        )
    if split is not None and split.other_pct >= OTHER_WAIT_OF_IDLE_PCT:
        fixes.append(
            Fix(
                "syncs",
                "Remove waits between streams and host-device syncs",
                [
                    "drop .item(), .cpu(), print(tensor) and torch.cuda.synchronize() from "
                    "the step",
                    "check cross-stream waits (wait_stream, CUDA events) for serialised work",
                ],
                f"{idle}: kernels were queued in time yet waited",
            )
        )
    return fixes


def _communication_fixes(facts: TraceFacts) -> list[Fix]:
    if facts.exposed_communication_pct < EXPOSED_COMMUNICATION_PCT:
        return []
    overlap = (
        f", {facts.communication_overlap_pct:.0f}% of it overlapped with compute"
        if facts.communication_overlap_pct is not None
        else ""
    )
    evidence = (
        f"collectives take {facts.communication_pct:.0f}% of the window{overlap}: "
        f"{facts.exposed_communication_pct:.0f}% exposed"
    )
    fixes = [
        Fix(
            "overlap",
            "Overlap communication with compute",
            [
                "DDP: keep gradient all-reduce inside backward (no blocking calls between "
                "backward and optimizer.step)",
                "FSDP: backward_prefetch=BACKWARD_PRE, forward_prefetch=True",
                "gradient accumulation with no_sync() on the inner steps",
            ],
            evidence,
        ),
        Fix(
            "buckets",
            "Tune gradient bucket sizes",
            [
                "DistributedDataParallel(bucket_cap_mb=...): larger buckets for many small "
                "collectives, smaller ones to start communicating earlier",
                "gradient_as_bucket_view=True",
            ],
            f"{evidence}; {facts.collective_calls:,} collective kernels among the top kernels",
        ),
    ]
    if facts.world_size and facts.world_size > 1:
        fixes.append(
            Fix(
                "fewer-ranks",
                "Use fewer ranks over PCIe, or a machine with NVLink",
                [
                    "on a PCIe-only machine, fewer GPUs per job (or larger per-GPU batches)",
                    "compress gradients (DDP comm hook bf16_compress_hook)",
                ],
                f"{evidence}; {facts.world_size} ranks share the links",
            )
        )
    return fixes


def _memory_fixes(facts: TraceFacts, verdict_kind: str | None) -> list[Fix]:
    fixes = []
    fp32 = facts.fp32_math_pct is not None and facts.fp32_math_pct >= FP32_MATH_PCT
    math_pct = facts.math_pct_of_busy
    if verdict_kind == "memory-bound" and math_pct is not None:
        top = f"; largest: {facts.top_bandwidth_kernel[:80]}" if facts.top_bandwidth_kernel else ""
        fixes.append(
            Fix(
                "fusion",
                "Fuse bandwidth-bound kernels",
                [
                    "torch.compile (fuses elementwise and normalisation chains)",
                    "fused optimizers (torch.optim.AdamW(fused=True))",
                    "fused attention (scaled_dot_product_attention)",
                ],
                f"elementwise, normalisation and reduction kernels take {100 - math_pct:.0f}% "
                f"of compute time against {math_pct:.0f}% matrix math{top}",
            )
        )
    if verdict_kind in ("memory-bound", "compute-bound") and (
        fp32 or verdict_kind == "memory-bound"
    ):
        precision = (
            f"matrix math runs in FP32 ({facts.fp32_math_pct:.0f}% of its time)"
            if fp32
            else "half the bytes per value halves the time of bandwidth-bound kernels"
        )
        fixes.append(
            Fix(
                "lower-precision",
                "Use lower precision",
                [
                    "torch.autocast(device_type='cuda', dtype=torch.bfloat16)",
                    "torch.backends.cuda.matmul.allow_tf32 = True for what stays FP32",
                ],
                precision,
            )
        )
    if verdict_kind == "compute-bound" and not fp32:
        fixes.append(
            Fix(
                "faster-gpu",
                "Nothing large to fix in the code: the GPU is busy with matrix math",
                ["a GPU with more tensor-core TFLOPS shortens the step (see What to rent)"],
                f"matrix math is {math_pct or 0:.0f}% of compute time; GPU idle "
                f"{facts.idle_pct:.0f}%",
            )
        )
    return fixes
