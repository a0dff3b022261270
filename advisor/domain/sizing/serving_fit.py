"""Whether a serving layout fits its stack's memory fraction, and if not, which higher
fraction a team could raise gpu_memory_utilization to (and the users it would then serve)."""

from advisor.domain.devices import Device
from advisor.domain.sizing.kv_pool import serving_usable_bytes
from advisor.domain.sizing.memory import MemoryBreakdown, format_gib
from advisor.domain.sizing.workload import Workload

# The fractions a team would raise gpu_memory_utilization to, in the answer's suggestion.
MEMORY_FRACTION_STEPS = (0.92, 0.95, 0.97, 0.99)


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
