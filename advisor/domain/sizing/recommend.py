"""For every GPU type and count: does it fit, how fast, what does it cost; ranked, explained.

When nothing fits, the remedies a team would try are sized too, each with its effect.
"""

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from advisor.domain.devices import Device, Offer
from advisor.domain.ranges import Range
from advisor.domain.sizing.assumptions import assumptions
from advisor.domain.sizing.kv_pool import kv_capacity_tokens
from advisor.domain.sizing.memory import (
    PAGED_OPTIMIZER_WARNING,
    MemoryBreakdown,
    Parallelism,
    format_gib,
    memory_per_gpu,
    paged_optimizer_memory,
)
from advisor.domain.sizing.precision import Dtype
from advisor.domain.sizing.serving_fit import serving_fit
from advisor.domain.sizing.slices import MigSlice, best_slice
from advisor.domain.sizing.speed import (
    InferenceSpeed,
    TrainingTime,
    compute_peak_tflops,
    inference_speed,
    training_time,
)
from advisor.domain.sizing.workload import Goal, Optimizer, Task, Workload

GPU_COUNTS = (1, 2, 4, 8)


@dataclass
class Candidate:
    device: Device
    parallelism: Parallelism
    memory: MemoryBreakdown
    usable_bytes: float
    fits: bool
    reason: str
    warnings: list[str] = field(default_factory=list)
    offer: Offer | None = None
    speed: InferenceSpeed | None = None
    training: TrainingTime | None = None
    usd_per_job: Range | None = None
    usd_per_million_tokens: Range | None = None
    mig_slice: MigSlice | None = None
    max_concurrent_users: int | None = None
    kv_capacity_tokens: int | None = None  # the serving stack's KV pool, in tokens
    max_concurrency: float | None = None  # the pool over one request's context, as vLLM logs

    @property
    def gpu_count(self) -> int:
        return self.parallelism.gpu_count

    @property
    def usd_per_hour(self) -> float | None:
        return self.offer.usd_per_hour if self.offer else None


@dataclass(frozen=True)
class Remedy:
    name: str
    change: str
    fits: bool
    effect: str
    best: Candidate | None


@dataclass
class SizingResult:
    workload: Workload
    candidates: list[Candidate]
    remedies: list[Remedy]
    assumptions: list[str]

    @property
    def fitting(self) -> list[Candidate]:
        return [c for c in self.candidates if c.fits]

    @property
    def best(self) -> Candidate | None:
        return self.fitting[0] if self.fitting else None


def _precision_problem(workload: Workload, device: Device) -> str | None:
    dtype = Dtype.BF16 if workload.task is Task.QLORA else workload.weight_dtype
    peak, _ = compute_peak_tflops(device, dtype)
    if peak is None:
        if device.low_confidence_warning or (dtype is Dtype.BF16 and device.supports_bf16):
            # The part may well have the units; the catalogue lacks the figure: say that.
            return f"the catalogue has no {dtype.upper()} figure for {device.name}: not sized"
        return f"{device.name} has no {dtype.upper()} support: choose fp16"
    if workload.task.trains and dtype is Dtype.FP8 and not device.supports_fp8:
        return f"{device.name} has no FP8 tensor cores for FP8 training"
    if workload.kv_dtype is Dtype.BF16 and not device.supports_bf16 and not workload.task.trains:
        return f"{device.name} has no BF16 support: choose an fp16 KV cache"
    return None


def _evaluate(
    workload: Workload,
    device: Device,
    parallelism: Parallelism,
    memory_cache: dict[Parallelism, MemoryBreakdown],
) -> tuple[MemoryBreakdown, float, str | None]:
    # Memory per GPU depends on the workload and the layout, not on which GPU: compute it once
    # per layout for the whole catalogue.
    memory = memory_cache.get(parallelism)
    if memory is None:
        memory = memory_cache[parallelism] = memory_per_gpu(workload, parallelism)
    usable = device.usable_memory_bytes
    if workload.stack.serving:
        return serving_fit(workload, device, memory, usable)
    paged = paged_optimizer_memory(workload, memory, usable)
    if paged is not None:
        return paged, usable, None
    if memory.total > usable:
        return (
            memory,
            usable,
            f"needs {format_gib(memory.total)} per GPU, {device.name} has "
            f"{format_gib(usable)} usable",
        )
    return memory, usable, None


def _parallelism_options(workload: Workload, count: int) -> list[Parallelism]:
    if not workload.task.trains:
        return [Parallelism(count, tensor_parallel=count)]
    tp = min(workload.tensor_parallel, count)
    if count % tp:
        return []
    if count // tp == 1:
        return [Parallelism(count, tensor_parallel=tp, zero_stage=0)]
    stages = [workload.zero_stage] if workload.zero_stage is not None else [0, 1, 2, 3]
    return [Parallelism(count, tensor_parallel=tp, zero_stage=s) for s in stages]


def _candidate(
    workload: Workload,
    device: Device,
    count: int,
    offers: Sequence[Offer],
    memory_cache: dict[Parallelism, MemoryBreakdown],
    layout_cache: dict[tuple[int, bool], list[Parallelism]],
) -> Candidate:
    arch = workload.architecture
    # Only a serving stack's non-torch memory reads the link: training layouts over NVLink and
    # over PCIe share one breakdown.
    fast_link = count <= device.fast_link_gpus or not workload.stack.serving
    options = layout_cache.get((count, fast_link))
    if options is None:
        options = layout_cache[count, fast_link] = [
            replace(option, fast_link=fast_link) for option in _parallelism_options(workload, count)
        ]
    problem = _precision_problem(workload, device)
    if not options:
        options = [Parallelism(count, fast_link=fast_link)]
        problem = (
            problem or f"tensor parallel {workload.tensor_parallel} does not divide {count} GPUs"
        )
    tp = options[0].tensor_parallel
    if problem is None and arch.num_attention_heads % tp:
        problem = f"{arch.num_attention_heads} attention heads do not split over {tp} GPUs"
    chosen = None
    for parallelism in options:
        memory, usable, memory_problem = _evaluate(workload, device, parallelism, memory_cache)
        chosen = (parallelism, memory, usable, memory_problem)
        if memory_problem is None:
            break
    assert chosen is not None
    parallelism, memory, usable, memory_problem = chosen
    reason = problem or memory_problem
    candidate = Candidate(
        device=device,
        parallelism=parallelism,
        memory=memory,
        usable_bytes=usable,
        fits=reason is None,
        reason=reason
        or f"{format_gib(memory.total)} of {format_gib(usable)} per GPU ({parallelism.describe()})",
    )
    if tp > 1 and tp > device.fast_link_gpus:
        candidate.warnings.append(
            f"tensor parallel over {tp} GPUs without a fast link ({device.interconnect}): "
            "its all-reduces cross PCIe (sized in the speed: slow for prefill and large batches)"
        )
    if memory.optimizer_states == 0 and memory_cache[parallelism].optimizer_states > 0:
        candidate.warnings.append(PAGED_OPTIMIZER_WARNING)  # the states were paged out
    if device.low_confidence_warning:
        candidate.warnings.append(device.low_confidence_warning)
    if workload.task is Task.QLORA and parallelism.zero_stage == 3:
        candidate.warnings.append(
            "4-bit QLoRA sharded with ZeRO-3 / FSDP needs a stack that supports it "
            "(FSDP-QLoRA with recent bitsandbytes and PEFT)"
        )
    if workload.weight_dtype in {Dtype.FP8, Dtype.INT8} and not workload.task.trains:
        _, note = compute_peak_tflops(device, workload.weight_dtype)
        if "dequantised" in note:
            candidate.warnings.append(f"{note}: memory saved, no compute speed-up")
    if not candidate.fits:
        return candidate
    matching = [
        o for o in offers if o.gpu_count == count and o.pricing_model == workload.pricing_model
    ]
    candidate.offer = min(matching, key=lambda o: o.usd_per_hour, default=None)
    if workload.task.trains:
        candidate.training = training_time(workload, device, parallelism)
        if candidate.offer:
            candidate.usd_per_job = candidate.training.hours.scaled(candidate.offer.usd_per_hour)
    else:
        candidate.speed = inference_speed(workload, device, parallelism)
        candidate.mig_slice = best_slice(workload, device, parallelism, memory, candidate.offer)
        if arch.has_kv_cache:
            capacity = kv_capacity_tokens(workload, parallelism, usable, memory)
            candidate.kv_capacity_tokens = capacity
            candidate.max_concurrency = capacity / workload.context_tokens
            candidate.max_concurrent_users = capacity // workload.context_tokens
        if candidate.offer:
            candidate.usd_per_million_tokens = _usd_per_million_tokens(
                workload, candidate.speed, candidate.offer.usd_per_hour
            )
    return candidate


def _usd_per_million_tokens(
    workload: Workload, speed: InferenceSpeed, usd_per_hour: float
) -> Range | None:
    """Per million generated tokens, counting each request's prefill as well as its decode;
    for an encoder-only model, per million input tokens encoded."""
    if workload.architecture.encoder_only:
        tokens, seconds = workload.context_tokens, speed.prefill_seconds
    elif workload.output_tokens:
        tokens, seconds = workload.output_tokens, speed.seconds_per_request
    else:
        return None
    tokens_per_hour = seconds.inverted(tokens * workload.batch_size * 3600)
    return tokens_per_hour.inverted(usd_per_hour * 1e6)


def _rank_key(workload: Workload):
    def key(candidate: Candidate) -> tuple:
        if not candidate.fits:
            return (2, candidate.memory.total / candidate.usable_bytes, candidate.device.name)
        if workload.goal is Goal.FASTEST:
            speed = (
                candidate.training.hours.expected
                if candidate.training
                else (candidate.speed.seconds_per_request.expected if candidate.speed else 0)
            )
            return (0 if candidate.offer else 1, speed, candidate.usd_per_hour or 0)
        if candidate.offer is None:
            return (1, candidate.gpu_count, candidate.device.name)
        cost = (
            candidate.usd_per_job.expected
            if candidate.usd_per_job
            else candidate.usd_per_million_tokens.expected
            if candidate.usd_per_million_tokens
            else candidate.offer.usd_per_hour
        )
        # Equal cost: the faster one first (2 GPUs for half the time cost the same).
        duration = (
            candidate.training.hours.expected
            if candidate.training
            else candidate.speed.seconds_per_request.expected
            if candidate.speed
            else 0
        )
        return (0, round(cost, 6), duration, candidate.gpu_count)

    return key


def rank_candidates(
    workload: Workload,
    devices: Iterable[Device],
    offers_by_device: Mapping[str, Sequence[Offer]],
    counts: Sequence[int] = GPU_COUNTS,
) -> list[Candidate]:
    # Memory per layout and the layouts per GPU count are the same for every GPU: made once.
    memory_cache: dict[Parallelism, MemoryBreakdown] = {}
    layout_cache: dict[tuple[int, bool], list[Parallelism]] = {}
    candidates = [
        _candidate(
            workload,
            device,
            count,
            offers_by_device.get(device.key, ()),
            memory_cache,
            layout_cache,
        )
        for device in devices
        for count in counts
    ]
    return sorted(candidates, key=_rank_key(workload))


def _remedy_variants(workload: Workload) -> list[tuple[str, str, Workload]]:
    arch = workload.architecture
    variants: list[tuple[str, str, Workload]] = []
    if workload.task is Task.INFERENCE:
        if arch.has_kv_cache and workload.kv_dtype not in {Dtype.FP8}:
            variants.append(
                (
                    "fp8 KV cache",
                    "store the KV cache in fp8 (halves it)",
                    workload.with_changes(kv_dtype=Dtype.FP8),
                )
            )
        # A quantised checkpoint served as stored is not re-quantised by a remedy.
        requantise = workload.stored_weights is None
        if requantise and workload.weight_dtype in {Dtype.FP32, Dtype.BF16, Dtype.FP16}:
            variants.append(
                (
                    "fp8 weights",
                    "serve fp8-quantised weights",
                    workload.with_changes(weight_dtype=Dtype.FP8),
                )
            )
        if requantise and workload.weight_dtype is not Dtype.INT4:
            variants.append(
                (
                    "int4 weights",
                    "serve 4-bit (GPTQ/AWQ) weights",
                    workload.with_changes(weight_dtype=Dtype.INT4),
                )
            )
        if workload.context_tokens > 1024:
            shorter = workload.context_tokens // 2
            variants.append(
                (
                    "shorter context",
                    f"cap the context at {shorter:,} tokens",
                    workload.with_changes(context_tokens=shorter),
                )
            )
        if workload.batch_size > 1:
            fewer = max(1, workload.batch_size // 2)
            variants.append(
                (
                    "fewer concurrent sequences",
                    f"serve {fewer} sequences at once",
                    workload.with_changes(batch_size=fewer),
                )
            )
        return variants
    if not workload.gradient_checkpointing:
        variants.append(
            (
                "gradient checkpointing",
                "recompute activations in the backward pass",
                workload.with_changes(gradient_checkpointing=True),
            )
        )
    if workload.zero_stage not in {None, 3}:
        variants.append(
            (
                "ZeRO-3 / FSDP",
                "shard weights, gradients and optimizer states",
                workload.with_changes(zero_stage=3),
            )
        )
    if workload.task in {Task.FULL, Task.PRETRAIN} and workload.optimizer is Optimizer.ADAMW:
        variants.append(
            (
                "8-bit Adam",
                "keep Adam's moments in 8 bits",
                workload.with_changes(optimizer=Optimizer.ADAMW_8BIT),
            )
        )
    if workload.task is Task.FULL:
        variants.append(
            (
                "LoRA",
                "train low-rank adapters on a frozen 16-bit model",
                workload.with_changes(task=Task.LORA),
            )
        )
    if workload.task in {Task.FULL, Task.LORA}:
        variants.append(
            (
                "QLoRA",
                "train adapters on a frozen 4-bit (NF4) model",
                workload.with_changes(task=Task.QLORA),
            )
        )
    if workload.batch_size > 1:
        variants.append(
            (
                "micro-batch 1",
                "micro-batch of 1 with gradient accumulation",
                workload.with_changes(batch_size=1),
            )
        )
    if workload.context_tokens > 1024:
        shorter = workload.context_tokens // 2
        variants.append(
            (
                "shorter sequences",
                f"train on {shorter:,}-token sequences",
                workload.with_changes(context_tokens=shorter),
            )
        )
    return variants


def _remedies(
    workload: Workload, devices: Sequence[Device], offers_by_device: Mapping[str, Sequence[Offer]]
) -> list[Remedy]:
    remedies = []
    for name, change, variant in _remedy_variants(workload):
        ranked = rank_candidates(variant, devices, offers_by_device)
        best = ranked[0] if ranked and ranked[0].fits else None
        if best:
            price = f", from ${best.offer.usd_per_hour:,.2f}/h" if best.offer else ""
            effect = (
                f"fits on {best.gpu_count}× {best.device.name}: {format_gib(best.memory.total)} of "
                f"{format_gib(best.usable_bytes)} per GPU{price}"
            )
        else:
            smallest = min(ranked, key=lambda c: c.memory.total / c.usable_bytes)
            effect = f"still does not fit: {smallest.reason}"
        remedies.append(Remedy(name, change, best is not None, effect, best))
    remedies.sort(
        key=lambda r: (
            not r.fits,
            r.best.offer is None if r.best else True,
            (r.best.usd_per_hour or 0) if r.best else 0,
        )
    )
    remedies.append(_more_gpus(workload, devices, offers_by_device))
    return remedies


def _more_gpus(
    workload: Workload, devices: Sequence[Device], offers_by_device: Mapping[str, Sequence[Offer]]
) -> Remedy:
    """Beyond one node: how many GPUs the memory alone calls for, as a first bound."""
    eight = [
        c
        for c in rank_candidates(workload, devices, offers_by_device, counts=(8,))
        if c.fits or c.reason.startswith("needs")  # not those ruled out by precision or heads
    ]
    if not eight:
        effect = "no GPU in the catalogue can run this layout at 8 GPUs (precision or heads)"
        return Remedy("more GPUs", "shard over more than 8 GPUs", False, effect, None)
    closest = min(eight, key=lambda c: c.memory.total / c.usable_bytes)
    gpus = math.ceil(8 * closest.memory.total / closest.usable_bytes)
    effect = (
        f"at least {gpus}× {closest.device.name} by memory alone (several nodes; "
        "inter-node bandwidth not sized here)"
    )
    return Remedy("more GPUs", "shard over more than 8 GPUs", False, effect, None)


def recommend(
    workload: Workload,
    devices: Sequence[Device],
    offers_by_device: Mapping[str, Sequence[Offer]],
) -> SizingResult:
    workload.validate()
    candidates = rank_candidates(workload, devices, offers_by_device)
    fits = any(c.fits for c in candidates)
    remedies = [] if fits else _remedies(workload, devices, offers_by_device)
    return SizingResult(workload, candidates, remedies, assumptions(workload))
