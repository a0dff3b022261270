"""A serving stack's KV-cache pool: what its memory fraction leaves for the cache on a GPU, and
how many tokens that holds (a range, from the other lines' spreads)."""

from advisor.domain.ranges import Range
from advisor.domain.sizing.memory import (
    MEMORY_COMPONENTS,
    MemoryBreakdown,
    Parallelism,
    memory_per_gpu,
)
from advisor.domain.sizing.precision import BYTES_PER_VALUE
from advisor.domain.sizing.stacks import Budget, Stack
from advisor.domain.sizing.workload import Workload


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
    memory = memory or memory_per_gpu(workload, parallelism)
    pool = usable - (memory.total - memory.kv_cache)
    return max(int(pool / _kv_bytes_per_token_per_gpu(workload, parallelism)), 0)


def kv_capacity_range(workload: Workload, parallelism: Parallelism, usable: float) -> Range:
    """kv_capacity_tokens as low / expected / high: the pool is `usable` less the other lines,
    each within its spread (MEMORY_SPREAD), so the pool moves the other way."""
    if not workload.architecture.has_kv_cache:
        return Range(0, 0, 0)
    memory = memory_per_gpu(workload, parallelism)
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
