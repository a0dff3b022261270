"""One candidate per GPU type and count: does it run, what does it hold per GPU, how fast, which
offer and what it costs; and every candidate of an answer, in rank order (ranking.py).

A candidate that does not run says why, by kind (`rejection`): the stack or a feature it needs
does not run on the accelerator (requirements.py, the compatibility table), the memory does not
fit, the catalogue lacks a figure to size it (`could_not_size`, naming what is missing), the
layout cannot split the model, the GPU lacks a precision, or tensor parallelism would cross
PCIe where one card holds the model.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from advisor.domain.compatibility.moves import StackMove
from advisor.domain.devices import Device, Offer
from advisor.domain.ranges import Range
from advisor.domain.sizing.cluster_layout import (
    SINGLE_NODE_COUNTS,
    candidate_counts,
    cluster_offers,
    multi_node_options,
    single_node,
)
from advisor.domain.sizing.kernel_padding import padded_expert_fraction, pads_weights
from advisor.domain.sizing.layout import Parallelism
from advisor.domain.sizing.memory import memory_per_gpu
from advisor.domain.sizing.memory_breakdown import MemoryBreakdown, format_gib
from advisor.domain.sizing.precision import Dtype
from advisor.domain.sizing.ranking import rank
from advisor.domain.sizing.rental import offer_choose
from advisor.domain.sizing.requirements import (
    Requirement,
    requirement_warnings,
    unmet_requirement,
    workload_requirements,
)
from advisor.domain.sizing.serving_memory import kv_capacity_tokens, serving_fit
from advisor.domain.sizing.slices import MigSlice, best_slice
from advisor.domain.sizing.speed import (
    InferenceSpeed,
    TrainingTime,
    compute_peak_tflops,
    inference_speed,
    tensor_parallel_allreduce_seconds,
    training_time,
)
from advisor.domain.sizing.speed.cluster import Cluster
from advisor.domain.sizing.training_memory import PAGED_OPTIMIZER_WARNING, paged_optimizer_memory
from advisor.domain.sizing.workload import Goal, Task, Workload

GPU_COUNTS = SINGLE_NODE_COUNTS


class Rejection:
    """Why a candidate does not run, by kind (the answer's rejected_summary counts them)."""

    DOES_NOT_FIT = "does_not_fit"  # the memory does not fit
    COULD_NOT_SIZE = "could_not_size"  # the catalogue lacks a figure this workload needs
    PRECISION = "precision"  # the GPU has no units for the precision
    LAYOUT = "layout"  # the layout cannot split the model (heads, tensor-parallel degree)
    PCIE_TENSOR_PARALLEL = "pcie_tensor_parallel"  # one GPU of the kind holds the model
    STACK = "stack"  # the stack, or a feature it needs, does not run on this accelerator


@dataclass
class Candidate:
    device: Device
    parallelism: Parallelism
    memory: MemoryBreakdown
    usable_bytes: float
    fits: bool
    reason: str
    rejection: str | None = None  # a Rejection kind when it does not run
    missing: list[str] = field(default_factory=list)  # could_not_size: the figures it lacks
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
    # The first candidate only: one with fewer GPUs at the same bill (ranking.py).
    equal_cost_alternative: "Candidate | None" = None
    # Sized under another stack than the workload's, where that one does not run.
    move: StackMove | None = None
    # Training across nodes: how many of the offer's instances make the cluster.
    instances: int = 1

    @property
    def gpu_count(self) -> int:
        return self.parallelism.gpu_count

    @property
    def usd_per_hour(self) -> float | None:
        """The whole cluster's price: the offer's per instance times the instances."""
        return self.offer.usd_per_hour * self.instances if self.offer else None


@dataclass(frozen=True)
class _Problem:
    kind: str
    reason: str
    missing: tuple[str, ...] = ()


def _precision_problem(workload: Workload, device: Device) -> _Problem | None:
    dtype = Dtype.BF16 if workload.task is Task.QLORA else workload.weight_dtype
    peak, _ = compute_peak_tflops(device, dtype)
    if peak is None:
        if device.low_confidence_warning or (dtype is Dtype.BF16 and device.supports_bf16):
            # The part may well have the units; the catalogue lacks the figure: say that.
            figure = f"{dtype.upper()} TFLOPS"
            return _Problem(
                Rejection.COULD_NOT_SIZE,
                f"could not size: the catalogue has no {figure} figure for {device.name}",
                (figure,),
            )
        return _Problem(
            Rejection.PRECISION, f"{device.name} has no {dtype.upper()} support: choose fp16"
        )
    if workload.task.trains and dtype is Dtype.FP8 and not device.supports_fp8:
        return _Problem(
            Rejection.PRECISION, f"{device.name} has no FP8 tensor cores for FP8 training"
        )
    if workload.kv_dtype is Dtype.BF16 and not device.supports_bf16 and not workload.task.trains:
        return _Problem(
            Rejection.PRECISION, f"{device.name} has no BF16 support: choose an fp16 KV cache"
        )
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
    if not single_node(count):
        return multi_node_options(workload, count)
    tp = min(workload.tensor_parallel, count)
    if count % tp:
        return []
    if count // tp == 1:
        return [Parallelism(count, tensor_parallel=tp, zero_stage=0)]
    stages = [workload.zero_stage] if workload.zero_stage is not None else [0, 1, 2, 3]
    return [Parallelism(count, tensor_parallel=tp, zero_stage=s) for s in stages]


@dataclass
class _Sizing:
    """What every candidate of one answer shares: the workload, what it relies on, the other
    stack it is sized under (None: its own), and the layouts and memory made once."""

    workload: Workload
    requirements: list[Requirement]
    move: StackMove | None = None
    memory_cache: dict[Parallelism, MemoryBreakdown] = field(default_factory=dict)
    layout_cache: dict[tuple[int, bool], list[Parallelism]] = field(default_factory=dict)
    # Per GPU type, whatever the count: what stops it or what warns.
    device_cache: dict[str, tuple["_Problem | None", list[str]]] = field(default_factory=dict)

    def device_checks(self, device: Device) -> tuple["_Problem | None", list[str]]:
        """Whether the stack, its features and the precision run on this GPU type, and the
        warnings of what runs only in part."""
        checked = self.device_cache.get(device.key)
        if checked is None:
            problem = _stack_problem(self, device) or _precision_problem(self.workload, device)
            warnings = requirement_warnings(
                self.requirements, device.platform, device.name, skip_stack=self.move is not None
            )
            checked = self.device_cache[device.key] = (problem, warnings)
        return checked


def _stack_problem(sizing: _Sizing, device: Device) -> _Problem | None:
    move = sizing.move
    if move is not None and device.platform not in move.platforms:
        return _Problem(Rejection.STACK, f"{move.stack} does not run on {device.name}")
    unmet = unmet_requirement(
        sizing.requirements, device.platform, device.name, skip_stack=move is not None
    )
    return _Problem(Rejection.STACK, unmet) if unmet else None


def _candidate(sizing: _Sizing, device: Device, count: int, offers: Sequence[Offer]) -> Candidate:
    workload = sizing.workload
    memory_cache, layout_cache = sizing.memory_cache, sizing.layout_cache
    arch = workload.architecture
    # Only a serving stack's non-torch memory reads the link: training layouts over NVLink and
    # over PCIe share one breakdown.
    fast_link = count <= device.fast_link_gpus or not workload.stack.serving
    options = layout_cache.get((count, fast_link))
    if options is None:
        options = layout_cache[count, fast_link] = [
            replace(option, fast_link=fast_link) for option in _parallelism_options(workload, count)
        ]
    if options and workload.stored_weights and pads_weights(arch, workload.stack.name):
        options = [
            replace(
                option,
                expert_padding=padded_expert_fraction(
                    arch, device.vendor, device.architecture, option.tensor_parallel
                ),
            )
            for option in options
        ]
    problem, device_warnings = sizing.device_checks(device)
    if not options:
        options = [Parallelism(count, fast_link=fast_link)]
        problem = problem or _Problem(
            Rejection.LAYOUT,
            f"tensor parallel {workload.tensor_parallel} does not divide {count} GPUs",
        )
    tp = options[0].tensor_parallel
    if problem is None and arch.num_attention_heads % tp:
        heads = arch.num_attention_heads
        problem = _Problem(Rejection.LAYOUT, f"{heads} attention heads do not split over {tp} GPUs")
    chosen = None
    for parallelism in options:
        memory, usable, memory_problem = _evaluate(workload, device, parallelism, memory_cache)
        chosen = (parallelism, memory, usable, memory_problem)
        if memory_problem is None:
            break
    assert chosen is not None
    parallelism, memory, usable, memory_problem = chosen
    if problem is None and memory_problem is not None:
        problem = _Problem(Rejection.DOES_NOT_FIT, memory_problem)
    candidate = Candidate(
        device=device,
        parallelism=parallelism,
        memory=memory,
        usable_bytes=usable,
        fits=problem is None,
        reason=problem.reason if problem else _fits_reason(memory, usable, parallelism),
        rejection=problem.kind if problem else None,
        missing=list(problem.missing) if problem else [],
        move=sizing.move,
    )
    candidate.warnings.extend(device_warnings)
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
    if workload.task.trains and not single_node(count):
        _price_cluster(candidate, workload, offers)
        return candidate
    candidate.offer = offer_choose(
        offers, gpu_count=count, rental=workload.rental, pricing_model=workload.pricing_model
    )
    if device.tensor_parallel_over_pcie(tp):
        candidate.warnings.append(_pcie_allreduce_warning(workload, device, parallelism))
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


def _price_cluster(candidate: Candidate, workload: Workload, offers: Sequence[Offer]) -> None:
    """A training candidate across nodes: its time over each network its instances come with,
    priced as that many instances; the cheapest run (the fastest, for that goal) is its."""
    device, parallelism = candidate.device, candidate.parallelism
    count = parallelism.gpu_count
    choices = cluster_offers(
        offers,
        gpu_count=count,
        tensor_parallel=parallelism.tensor_parallel,
        rental=workload.rental,
        pricing_model=workload.pricing_model,
    )
    best = None
    for offer in choices:
        timing = training_time(
            workload, device, parallelism, Cluster(offer.gpu_count, offer.network)
        )
        instances = count // offer.gpu_count
        usd = timing.hours.scaled(offer.usd_per_hour * instances)
        key = usd.expected if workload.goal is Goal.CHEAPEST else timing.hours.expected
        if best is None or key < best[0]:
            best = (key, offer, instances, timing, usd)
    if best is None:
        candidate.training = training_time(workload, device, parallelism)
        candidate.warnings.append(
            f"no rentable instance of {device.name} whose GPUs make {count:,}: not priced, "
            "and the network between its nodes is not sized"
        )
        return
    _, candidate.offer, candidate.instances, candidate.training, candidate.usd_per_job = best
    if candidate.offer.network.assumed:
        candidate.warnings.append(
            f"{candidate.offer.instance_type} lists no inter-node fabric: "
            f"{candidate.offer.network.fabric} between its {candidate.instances} instances"
        )


def _fits_reason(memory: MemoryBreakdown, usable: float, parallelism: Parallelism) -> str:
    return f"{format_gib(memory.total)} of {format_gib(usable)} per GPU ({parallelism.describe()})"


def _pcie_allreduce_warning(workload: Workload, device: Device, parallelism: Parallelism) -> str:
    """What tensor parallelism over PCIe costs this workload, in its own step times."""
    tp = parallelism.tensor_parallel
    what = f"tensor parallel over {tp} GPUs without a fast link ({device.interconnect})"
    if workload.task.trains:
        return f"{what}: its all-reduces cross PCIe, sized in the step time"
    decode = tensor_parallel_allreduce_seconds(workload, device, parallelism, workload.batch_size)
    prompt = tensor_parallel_allreduce_seconds(
        workload, device, parallelism, workload.context_tokens - workload.output_tokens
    )
    return (
        f"{what}: its all-reduces cross PCIe, {decode.expected * 1e3:.2f} ms of every decode "
        f"step and {prompt.expected * 1e3:.1f} ms of each prompt's prefill (in the speeds shown)"
    )


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


def rank_candidates(
    workload: Workload,
    devices: Iterable[Device],
    offers_by_device: Mapping[str, Sequence[Offer]],
    counts: Sequence[int] | None = None,
    move: StackMove | None = None,
) -> list[Candidate]:
    """Every GPU of the catalogue at every count up to the rental's max_gpus (across nodes for
    training: cluster_layout.py), in answer order;
    with `move`, sized under that other stack (on the families it runs on)."""
    if counts is None:
        counts = candidate_counts(workload)
    # Memory per layout and the layouts per GPU count are the same for every GPU: made once.
    sizing = _Sizing(workload, workload_requirements(workload), move)
    candidates = [
        _candidate(sizing, device, count, offers_by_device.get(device.key, ()))
        for device in devices
        for count in counts
    ]
    _tensor_parallel_over_pcie_only_when_needed(candidates)
    return rank(workload, candidates)


def _tensor_parallel_over_pcie_only_when_needed(candidates: Sequence[Candidate]) -> None:
    """Tensor parallelism over PCIe (PCIe-only cards, bridged pairs) is offered only when no
    single card of the kind holds the workload: not the same card, and no PCIe card on offer.
    A team rents one 24 GB card rather than four 10 GB ones that all-reduce over PCIe."""
    singles = {c.device.key: c for c in candidates if c.gpu_count == 1 and c.fits}
    offered_pcie_cards = [
        c for c in singles.values() if c.offer is not None and not c.device.has_node_fabric
    ]
    cheapest_card = min(offered_pcie_cards, key=lambda c: c.offer.usd_per_hour, default=None)
    for candidate in candidates:
        if not candidate.fits or not candidate.device.tensor_parallel_over_pcie(
            candidate.parallelism.tensor_parallel
        ):
            continue
        holder = singles.get(candidate.device.key) or cheapest_card
        if holder is None:
            continue
        candidate.fits = False
        candidate.rejection = Rejection.PCIE_TENSOR_PARALLEL
        candidate.reason = (
            f"one {holder.device.name} holds it on its own ({holder.reason}): tensor parallel "
            "over PCIe is offered only when no single card does"
        )
        candidate.offer = None
        candidate.speed = candidate.training = None
        candidate.usd_per_job = candidate.usd_per_million_tokens = None
