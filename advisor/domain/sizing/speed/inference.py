"""Serving speed: prefill over the prompt, then decode steps that read the weights and the KV
cache at its average length, with weight-only dequantisation and tensor-parallel all-reduces.

Every figure is a range (low / expected / high) because efficiency varies with the software
stack; the efficiency ranges come from published measurements (efficiency.py).
"""

from dataclasses import dataclass

from advisor.domain.devices import Device
from advisor.domain.ranges import Range
from advisor.domain.sizing.layout import Parallelism
from advisor.domain.sizing.precision import BYTES_PER_VALUE, Dtype, is_quantised
from advisor.domain.sizing.serving_memory import serving_weight_bytes
from advisor.domain.sizing.speed.communication import (
    ALLREDUCES_PER_LAYER_FORWARD,
    allreduce_seconds,
)
from advisor.domain.sizing.speed.efficiency import (
    DECODE_BANDWIDTH_EFFICIENCY,
    DEQUANT_FLOPS_PER_WEIGHT_4BIT,
    DEQUANT_FLOPS_PER_WEIGHT_8BIT,
    FOUR_BIT_CLASS_MAX_BITS,
    PREFILL_LAYER_OVERHEAD_S,
    compute_peak_tflops,
    inference_compute_efficiency,
)
from advisor.domain.sizing.speed.moe import decode_expert_seconds, prefill_expert_seconds
from advisor.domain.sizing.workload import Workload

ACTIVATION_BYTES = 2  # a 16-bit hidden state per token is what the all-reduces carry


@dataclass(frozen=True)
class InferenceSpeed:
    # The sustained output rate at the workload's concurrency, each request's prefill
    # included: batch x output tokens over seconds_per_request. What a server holding that
    # many requests delivers; None for a model that generates nothing (an encoder).
    output_tokens_per_s_total: Range | None
    # The decode phase alone: the rate while no prompt is being prefilled.
    decode_tokens_per_s_per_sequence: Range
    decode_tokens_per_s_total: Range
    prefill_seconds: Range  # the whole batch's prompts
    time_to_first_token_seconds: Range  # one request's prompt, alone
    seconds_per_request: Range
    bound: str  # "memory bandwidth" or "compute"
    compute_note: str


def prompt_tokens(workload: Workload) -> int:
    """The prompt: the context less the generated tokens it holds (context_tokens is the
    final length). A context too short to hold the output is read as the prompt alone."""
    if workload.context_tokens > workload.output_tokens:
        return workload.context_tokens - workload.output_tokens
    return workload.context_tokens


def average_decode_kv_tokens(workload: Workload) -> float:
    """The KV length a decode step reads, averaged over the output: the prompt plus half the
    generated tokens (the cache grows by one token per step)."""
    return prompt_tokens(workload) + workload.output_tokens / 2


def _expected_weight_fraction_read(workload: Workload) -> float:
    """Share of the weights one decode step reads: all of a dense model but its vision tower;
    for a MoE everything but the routed experts, plus each expert that at least one sequence
    in the batch routes to (each token picks k of E: an expert is idle with probability
    (1 - k/E)^batch)."""
    arch = workload.architecture
    idle = arch.params_vision
    if arch.params_routed_experts:
        idle += arch.params_routed_experts * (1 - arch.routed_fraction_per_token) ** (
            workload.batch_size
        )
    return 1 - idle / arch.params_total


def _weight_bytes_read(workload: Workload) -> float:
    """Weight bytes one decode step reads. A checkpoint stored at mixed widths (MXFP4 experts,
    bf16 attention) reads its experts' stored bytes, not their share of the parameters, and
    never its vision tower."""
    stored = workload.stored_weights
    if stored is None or not stored.routed_expert_bytes:
        return serving_weight_bytes(workload) * _expected_weight_fraction_read(workload)
    idle = (1 - workload.architecture.routed_fraction_per_token) ** workload.batch_size
    return stored.weight_bytes - stored.routed_expert_bytes * idle - stored.vision_bytes


def dequantised_weight_flops(workload: Workload, device: Device) -> float:
    """CUDA-core FLOPs one decode step spends unpacking weight-only quantised weights back to
    16 bits (efficiency.py): int4 and int8 weights, and fp8 on a GPU without fp8 units. Native
    fp8 weights go straight into fp8 tensor-core math."""
    arch = workload.architecture
    read_fraction = _expected_weight_fraction_read(workload)
    stored = workload.stored_weights
    if stored is not None:
        flops = 0.0
        for part in stored.parts:
            if part.bits_per_param >= 16:
                continue
            native_fp8 = stored.method == "fp8" and device.supports_fp8
            if native_fp8:
                continue
            per_weight = (
                DEQUANT_FLOPS_PER_WEIGHT_4BIT
                if part.bits_per_param <= FOUR_BIT_CLASS_MAX_BITS
                else DEQUANT_FLOPS_PER_WEIGHT_8BIT
            )
            flops += part.params * per_weight
        return flops * read_fraction
    dtype = workload.weight_dtype
    if not is_quantised(dtype) or (dtype is Dtype.FP8 and device.supports_fp8):
        return 0.0
    per_weight = (
        DEQUANT_FLOPS_PER_WEIGHT_4BIT if dtype is Dtype.INT4 else DEQUANT_FLOPS_PER_WEIGHT_8BIT
    )
    return (arch.params_total - arch.params_embedding) * read_fraction * per_weight


def tensor_parallel_allreduce_seconds(
    workload: Workload, device: Device, parallelism: Parallelism, tokens: float
) -> Range:
    """The all-reduces of one forward pass over `tokens` tokens: two per layer, each carrying
    the tokens' hidden states."""
    tp = parallelism.tensor_parallel
    arch = workload.architecture
    message_bytes = tokens * arch.hidden_size * ACTIVATION_BYTES
    one = allreduce_seconds(device, tp, message_bytes)
    return one.scaled(ALLREDUCES_PER_LAYER_FORWARD * arch.num_layers)


@dataclass(frozen=True)
class ForwardPassParts:
    """What one forward pass of a serving replica is made of, for an iteration that decodes
    and prefills at once (the capacity planner's queue): the weights read once, the matmul
    FLOPs per token, whatever is bound."""

    prefill_weight_seconds: Range  # every weight read once (a prompt touches all experts)
    decode_weight_seconds: Range  # the weights a decode step at the workload's batch reads
    compute_seconds_per_token: Range  # 2·N active FLOPs per token at the serving efficiency


def forward_pass_parts(
    workload: Workload, device: Device, parallelism: Parallelism
) -> ForwardPassParts:
    tp = parallelism.tensor_parallel
    peak, _ = compute_peak_tflops(device, workload.weight_dtype)
    return ForwardPassParts(
        prefill_weight_seconds=_all_weights_seconds(workload, device, tp),
        decode_weight_seconds=_decode_weight_seconds(workload, device, tp),
        compute_seconds_per_token=_compute_seconds(workload, device, tp, 1, (peak or 0.0) * 1e12),
    )


def _compute_seconds(
    workload: Workload, device: Device, tp: int, tokens: float, peak_flops: float
) -> Range:
    """The matmuls of a forward pass over `tokens` tokens: 2·N active FLOPs each."""
    flops = 2 * workload.architecture.params_active * tokens / tp
    return _flops_seconds(workload, device, flops, peak_flops)


def _flops_seconds(workload: Workload, device: Device, flops: float, peak_flops: float) -> Range:
    efficiency = inference_compute_efficiency(device, workload.weight_dtype)
    return efficiency.inverted(flops / (peak_flops or 1))


def prefill_attention_flops(workload: Workload, prompt: int, prefix: float = 0.0) -> float:
    """The attention core of one prompt's prefill, which 2·N per token leaves out (its products
    have no weights): QK^T and the weighted sum (attention_flops_per_pair) over the query-key
    pairs a causal mask keeps, a window's in sliding-window layers, every pair in an encoder;
    the accounting of training.attention_flops (PaLM, appendix B) for one forward pass. A chunk
    of a longer prompt (`prefix` tokens of it already cached) attends to those too."""
    arch = workload.architecture
    if arch.encoder_only:
        pairs = arch.num_layers * float(prompt) * prompt
    else:
        full = arch.num_layers - arch.sliding_window_layers
        pairs = full * _causal_pairs(prompt + prefix, None) - full * _causal_pairs(prefix, None)
        if arch.sliding_window_layers:
            window = arch.sliding_window
            pairs += arch.sliding_window_layers * (
                _causal_pairs(prompt + prefix, window) - _causal_pairs(prefix, window)
            )
    return arch.attention_flops_per_pair * pairs


def _causal_pairs(tokens: float, window: int | None) -> float:
    """Query-key pairs of the first `tokens` positions under a causal mask, each query seeing at
    most `window` keys (itself included)."""
    if window is None or tokens <= window:
        return tokens * (tokens + 1) / 2
    return window * tokens - window * (window - 1) / 2


def _all_weights_seconds(workload: Workload, device: Device, tp: int) -> Range:
    return DECODE_BANDWIDTH_EFFICIENCY.inverted(
        serving_weight_bytes(workload) / tp / (device.bandwidth_gb_s * 1e9)
    )


def _decode_weight_seconds(workload: Workload, device: Device, tp: int) -> Range:
    # Unpacking quantised weights runs on the CUDA cores beside the reads, at the same
    # efficiency: it is part of the memory-bound step.
    dequant_seconds = (
        dequantised_weight_flops(workload, device) / tp / (device.fp32_tflops * 1e12)
        if device.fp32_tflops
        else 0.0
    )
    return DECODE_BANDWIDTH_EFFICIENCY.inverted(
        _weight_bytes_read(workload) / tp / (device.bandwidth_gb_s * 1e9) + dequant_seconds
    )


def _prefill_time(
    workload: Workload,
    device: Device,
    parallelism: Parallelism,
    sequences: int,
    peak_flops: float,
    prefix: float = 0.0,
) -> Range:
    """Prefill of `sequences` prompts: 2·N FLOPs per prompt token and the attention core's
    (prefill_attention_flops, past `prefix` cached tokens each), or one read of the weights
    when the prompts are too short to be compute-bound; plus its all-reduces and its fixed
    cost per layer and, for a MoE, per expert touched (moe.py)."""
    arch = workload.architecture
    tp = parallelism.tensor_parallel
    prompt = prompt_tokens(workload)
    tokens = prompt * sequences
    attention = prefill_attention_flops(workload, prompt, prefix) * sequences / tp
    compute = _compute_seconds(workload, device, tp, tokens, peak_flops).plus(
        _flops_seconds(workload, device, attention, peak_flops)
    )
    weights = _all_weights_seconds(workload, device, tp)
    overhead = PREFILL_LAYER_OVERHEAD_S.scaled(arch.num_layers)
    return (
        compute.slower(weights)
        .plus(tensor_parallel_allreduce_seconds(workload, device, parallelism, tokens))
        .plus(overhead)
        .plus(prefill_expert_seconds(arch, tokens))
    )


def prefill_seconds(
    workload: Workload, device: Device, parallelism: Parallelism, prefix: float = 0.0
) -> Range:
    """One forward pass over the workload's batch of prompts (or of prompt chunks, each past
    `prefix` tokens already cached): what a serving iteration that prefills them spends."""
    peak, _ = compute_peak_tflops(device, workload.weight_dtype)
    return _prefill_time(
        workload, device, parallelism, workload.batch_size, (peak or 0.0) * 1e12, prefix
    )


def inference_speed(workload: Workload, device: Device, parallelism: Parallelism) -> InferenceSpeed:
    arch = workload.architecture
    tp = parallelism.tensor_parallel
    batch = workload.batch_size
    peak, note = compute_peak_tflops(device, workload.weight_dtype)
    peak_flops = (peak or 0.0) * 1e12
    bandwidth = device.bandwidth_gb_s * 1e9
    kv_bytes = arch.kv_cache_bytes(
        round(average_decode_kv_tokens(workload)), batch, BYTES_PER_VALUE[workload.kv_dtype]
    ) / min(tp, arch.num_kv_heads)
    weight_time = _decode_weight_seconds(workload, device, tp)
    compute_time = _compute_seconds(workload, device, tp, batch, peak_flops)
    # Decode attention is its own kernel between the QKV projection and the output projection
    # ("The generation phase is implemented using a single kernel, called the masked multihead
    # attention"; its input is "the Q, K and V tensors ... after the projection", TensorRT-LLM
    # https://github.com/NVIDIA/TensorRT-LLM/blob/b57221b764bc579cbb2490154916a871f620e2c4/
    # docs/source/gpt_attention.md): its KV reads add to the matmuls' time, however those are
    # bound, rather than hide under compute-bound ones.
    kv_time = DECODE_BANDWIDTH_EFFICIENCY.inverted(kv_bytes / bandwidth)
    # A MoE's routed experts: a fixed cost per MoE layer (moe.py).
    step = (
        weight_time.slower(compute_time)
        .plus(kv_time)
        .plus(decode_expert_seconds(arch))
        .plus(tensor_parallel_allreduce_seconds(workload, device, parallelism, batch))
    )
    memory_time = weight_time.plus(kv_time)
    bound = "memory bandwidth" if memory_time.expected >= compute_time.expected else "compute"
    prefill = _prefill_time(workload, device, parallelism, batch, peak_flops)
    first_token = _prefill_time(workload, device, parallelism, 1, peak_flops)
    per_sequence = step.inverted(1.0)
    total = per_sequence.scaled(batch)
    request = prefill.plus(step.scaled(workload.output_tokens))
    output = request.inverted(batch * workload.output_tokens) if workload.output_tokens else None
    return InferenceSpeed(output, per_sequence, total, prefill, first_token, request, bound, note)
