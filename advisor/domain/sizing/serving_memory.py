"""Serving memory per GPU: the lines a served model holds (its weights as the stack loads them,
the batch's KV cache, a prefill chunk's activations, the sampler's logits, the stack's
non-torch memory), the KV pool the stack's memory fraction leaves for the cache and how many
tokens it holds, and whether the batch fits in it."""

from advisor.domain.devices import Device
from advisor.domain.provenance import fitted
from advisor.domain.ranges import Range
from advisor.domain.sizing.layout import Parallelism
from advisor.domain.sizing.memory_breakdown import (
    FP32_BYTES,
    MEMORY_COMPONENTS,
    MemoryBreakdown,
    format_gib,
)
from advisor.domain.sizing.precision import (
    BYTES_PER_VALUE,
    is_quantised,
    weight_bytes_per_param,
)
from advisor.domain.sizing.stacks import Budget, Stack
from advisor.domain.sizing.workload import Workload

# vLLM-style serving runs prefill in chunks of at most this many tokens.
PREFILL_CHUNK_TOKENS = 8192
# Per-token transient values of a forward pass at inference (q, k, v, attention output, gated
# MLP, residuals), calibrated on vLLM's measured 1.89 GiB activation peak for Llama-3.1-8B at
# 8,192 batched tokens: (12·h + 4·I) 16-bit values per token.
INFERENCE_TRANSIENT_H, INFERENCE_TRANSIENT_I = 12, 4
fitted("INFERENCE_TRANSIENT_H", fitted_on=("vllm-llama-3.1-8b-tp1-activation-peak",))
fitted("INFERENCE_TRANSIENT_I", fitted_on=("vllm-llama-3.1-8b-tp1-activation-peak",))
# The fractions a team would raise gpu_memory_utilization to, in the answer's suggestion.
MEMORY_FRACTION_STEPS = (0.92, 0.95, 0.97, 0.99)


def serving_weight_bytes(workload: Workload) -> float:
    arch = workload.architecture
    if workload.stored_weights:
        return workload.stored_weights.weight_bytes
    dtype = workload.weight_dtype
    if is_quantised(dtype):
        linear = arch.params_total - arch.params_embedding
        return linear * weight_bytes_per_param(dtype) + arch.params_embedding * 2
    return arch.params_total * BYTES_PER_VALUE[dtype]


def serving_memory(workload: Workload, parallelism: Parallelism) -> MemoryBreakdown:
    """Weights, the KV cache the batch needs, the activation peak of a prefill chunk (what a
    serving stack profiles), the sampler's logits and the stack's non-torch memory. The KV
    pool is allocated up front, so there is no allocator headroom over it."""
    arch = workload.architecture
    tp = parallelism.tensor_parallel
    stack = workload.stack
    weights = serving_weight_bytes(workload) / tp
    if workload.stored_weights is not None:
        # Weights served as stored: what the stack's kernels pad them to (kernel_padding.py).
        padding = workload.stored_weights.routed_expert_bytes * (parallelism.expert_padding - 1)
        weights += padding / tp
    sequence = workload.context_tokens + (workload.output_tokens if arch.encoder_decoder else 0)
    kv = arch.kv_cache_bytes(
        sequence, workload.batch_size, BYTES_PER_VALUE[workload.kv_dtype]
    ) / min(tp, arch.num_kv_heads)
    chunk = min(workload.batch_size * workload.context_tokens, PREFILL_CHUNK_TOKENS)
    transient = (
        INFERENCE_TRANSIENT_H * arch.hidden_size
        + INFERENCE_TRANSIENT_I * arch.intermediate_size / tp
    )
    return MemoryBreakdown(
        weights=weights,
        activations=chunk * transient * 2,
        kv_cache=kv,
        logits=workload.batch_size * arch.vocab_size * FP32_BYTES / tp,
        runtime_overhead=stack.non_torch_bytes(parallelism.gpu_count, parallelism.fast_link)
        + stack.cuda_graph_bytes,
    )


def kv_pool_bytes(
    workload: Workload,
    memory: MemoryBreakdown,
    cuda_bytes: float,
    fraction: float | None = None,
) -> float:
    """The KV-cache pool a serving stack allocates on a GPU showing `cuda_bytes` to CUDA, at
    `fraction` or the workload's memory fraction (negative: the stack cannot allocate one)."""
    stack: Stack = workload.stack
    if fraction is None:
        fraction = workload.gpu_memory_utilization or 0.0
    transient = memory.activations + memory.logits + memory.runtime_overhead
    if stack.budget is Budget.STATIC:
        # SGLang takes the fraction of the memory free once CUDA and NCCL are up (its
        # ModelRunner reads it after init_torch_distributed, before loading, and sizes the pool
        # as free after loading - (1 - fraction) x that): weights + KV within the fraction of
        # it; what activations and logits need beyond the rest comes out of the pool.
        # https://github.com/sgl-project/sglang/blob/01cc04e2b5b01ce379698a3fee1bd17706e1d0ec/python/sglang/srt/model_executor/model_runner.py
        free_at_start = cuda_bytes - memory.runtime_overhead
        spill = max(memory.activations + memory.logits - (1 - fraction) * free_at_start, 0.0)
        return fraction * free_at_start - memory.weights - spill
    if stack.budget is Budget.FREE:
        return fraction * (cuda_bytes - memory.weights - transient)
    return fraction * cuda_bytes - memory.weights - transient


def serving_usable_bytes(
    workload: Workload,
    memory: MemoryBreakdown,
    cuda_bytes: float,
    fraction: float | None = None,
) -> float:
    """What the stack lets this workload use per GPU: the pool plus everything but the KV
    cache, so that `memory.total <= usable` exactly when the batch's KV fits in the pool.
    For vLLM it is gpu_memory_utilization (or `fraction`) × the memory CUDA reports."""
    pool = kv_pool_bytes(workload, memory, cuda_bytes, fraction)
    return pool + memory.total - memory.kv_cache


def _kv_bytes_per_token_per_gpu(workload: Workload, parallelism: Parallelism) -> float:
    arch = workload.architecture
    return arch.kv_bytes_per_token(BYTES_PER_VALUE[workload.kv_dtype]) / min(
        parallelism.tensor_parallel, arch.num_kv_heads
    )


def kv_capacity_tokens(
    workload: Workload,
    parallelism: Parallelism,
    usable: float,
    memory: MemoryBreakdown | None = None,
) -> int:
    """Tokens of KV cache in the serving stack's pool, where `usable` is what the stack lets
    the workload use per GPU (Candidate.usable_bytes, serving_usable_bytes): the pool is what
    is left of it once everything but the KV cache is placed (serving capacity). `memory`:
    the layout's breakdown when the caller has it."""
    if not workload.architecture.has_kv_cache:
        return 0
    memory = memory or serving_memory(workload, parallelism)
    pool = usable - (memory.total - memory.kv_cache)
    return max(int(pool / _kv_bytes_per_token_per_gpu(workload, parallelism)), 0)


def kv_capacity_range(workload: Workload, parallelism: Parallelism, usable: float) -> Range:
    """kv_capacity_tokens as low / expected / high: the pool is `usable` less the other lines,
    each within its spread (MEMORY_SPREAD), so the pool moves the other way."""
    if not workload.architecture.has_kv_cache:
        return Range(0, 0, 0)
    memory = serving_memory(workload, parallelism)
    others = [name for name in MEMORY_COMPONENTS if name != "kv_cache"]
    lines = [memory.component_range(name, serving=True) for name in others]
    per_token = _kv_bytes_per_token_per_gpu(workload, parallelism)

    def tokens(taken: float) -> float:
        return max((usable - taken) / per_token, 0.0)

    return Range(
        tokens(sum(line.high for line in lines)),
        tokens(sum(line.expected for line in lines)),
        tokens(sum(line.low for line in lines)),
    )


def serving_fit(
    workload: Workload, device: Device, memory: MemoryBreakdown, cuda_bytes: float
) -> tuple[MemoryBreakdown, float, str | None]:
    """Fits when the stack's KV pool at its memory fraction holds the batch's KV cache; if
    not, says which higher fraction would, with the concurrency it would give."""
    usable = serving_usable_bytes(workload, memory, cuda_bytes)
    if memory.total <= usable:
        return memory, usable, None
    fraction = workload.gpu_memory_utilization
    pool = usable - (memory.total - memory.kv_cache)
    reason = (
        f"needs {format_gib(memory.total)} per GPU, {device.name} has {format_gib(usable)} "
        f"usable at gpu_memory_utilization {fraction:.2f}"
        + (
            f" ({workload.stack.label} cannot allocate a KV-cache pool)"
            if pool <= 0
            else f" (KV pool {format_gib(pool)}, the batch needs {format_gib(memory.kv_cache)})"
        )
    )
    # The pool only grows with the fraction: when the largest does not fit, none does.
    largest = MEMORY_FRACTION_STEPS[-1]
    if largest <= fraction or memory.total > serving_usable_bytes(
        workload, memory, cuda_bytes, fraction=largest
    ):
        return memory, usable, reason
    for step in MEMORY_FRACTION_STEPS:
        if step <= fraction:
            continue
        raised_usable = serving_usable_bytes(workload, memory, cuda_bytes, fraction=step)
        if memory.total <= raised_usable:
            reason += f"; fits at gpu_memory_utilization {step:.2f}"
            if memory.kv_cache > 0:  # a model with no KV cache (encoder-only) has no users
                pool_raised = raised_usable - memory.total + memory.kv_cache
                reason += f" with ~{pool_raised / memory.kv_cache * workload.batch_size:.1f} users"
            break
    return memory, usable, reason
