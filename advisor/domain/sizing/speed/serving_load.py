"""A serving stack at its most load: every request queued at once, as many running as the KV
pool holds at their final length, each request's prefill batched in among the others' decode
steps (in-flight or continuous batching).

This is what a throughput benchmark measures (trtllm-bench throughput, vLLM's
benchmark_throughput) and the most one replica serves. In steady state a request costs its
prefill, batched with B others, plus its output steps at B, shared by B: output tokens/s =
B x output / (prefill of B prompts + output x step(B)), the sustained rate of
inference_speed at batch B, times the data-parallel replicas.
"""

from advisor.domain.devices import Device
from advisor.domain.provenance import fitted
from advisor.domain.ranges import Range
from advisor.domain.sizing.layout import Parallelism
from advisor.domain.sizing.speed.inference import inference_speed
from advisor.domain.sizing.workload import Workload

# trtllm-bench's engine build caps the max batch size at 4,096 ("Cap total batch size to avoid
# decoder buffer size becoming too large"); below the cap the runtime's KV pool, smaller than
# the build's estimate, is reached first. TensorRT-LLM v0.17:
# https://github.com/NVIDIA/TensorRT-LLM/blob/v0.17.0/tensorrt_llm/bench/build/tuning.py
# The run's own report: "Max Runtime Batch Size: 4096 ... Scheduling Policy: Guaranteed No
# Evict" (https://github.com/NVIDIA/TensorRT-LLM/blob/258c7540c03517def55d9a5aadfa9288af474e1b/
# docs/source/performance/perf-overview.md, its sample output).
MAX_LOAD_BATCH = 4096
fitted(
    "MAX_LOAD_BATCH",
    fitted_on=(),
    source="trtllm-bench's batch cap (TensorRT-LLM v0.17 tuning.py and its sample report)",
)


def max_load_concurrency(workload: Workload, pool_tokens: float) -> int:
    """How many requests run at once when the scheduler admits one only if the KV pool holds
    its prompt and all its output (guaranteed no evict): the pool over the final length."""
    return min(MAX_LOAD_BATCH, int(pool_tokens // workload.context_tokens))


def max_load_output_rate(
    workload: Workload, device: Device, parallelism: Parallelism, pool_tokens: Range
) -> Range | None:
    """Output tokens/s of all the layout's replicas at the most load the pool admits; each end
    of the range at its end of the pool (the fewest requests with the slowest steps). None when
    the model generates nothing or the pool holds no whole request."""
    if not workload.output_tokens or not workload.architecture.has_kv_cache:
        return None
    replicas = parallelism.gpu_count // parallelism.tensor_parallel
    ends = []
    for end, tokens in enumerate((pool_tokens.low, pool_tokens.expected, pool_tokens.high)):
        batch = max_load_concurrency(workload, tokens)
        if batch < 1:
            ends.append(0.0)
            continue
        speed = inference_speed(workload.with_changes(batch_size=batch), device, parallelism)
        rate = speed.seconds_per_request.inverted(batch * workload.output_tokens * replicas)
        ends.append((rate.low, rate.expected, rate.high)[end])
    if ends[2] <= 0:
        return None
    return Range(ends[0], ends[1], ends[2])
