"""How fast: decode from the bandwidth roofline, prefill and training from dense peak × MFU.

Every figure is a range (low / expected / high) because efficiency varies with the software
stack; the efficiency ranges come from published measurements (sizing_reference.json).
"""

from dataclasses import dataclass

from advisor.domain.devices import Device
from advisor.domain.ranges import Range
from advisor.domain.sizing.memory import Parallelism, _inference_weight_bytes
from advisor.domain.sizing.precision import BYTES_PER_VALUE, Dtype
from advisor.domain.sizing.workload import Task, Workload

# Batch-1 decode reaches 48-86% of the bandwidth roofline in the published runs
# (llama.cpp, MLC, ExLlama on RTX 3090 Ti / 4090 / Apple M-series), median about 70%.
DECODE_BANDWIDTH_EFFICIENCY = Range(0.45, 0.70, 0.88)
# Large-batch decode and prefill turn compute-bound; serving stacks reach 40-70% of peak
# (llm-analysis: "up to 0.7 for inference").
INFERENCE_COMPUTE_EFFICIENCY = Range(0.40, 0.55, 0.70)
# Training MFU: Llama 2 (A100) 38-43%, Llama 3.1 (H100) 25-35% over all GPU-hours, Llama 3
# 405B 38-43% in steady state, Megatron-LM 52%.
TRAINING_MFU = Range(0.25, 0.38, 0.50)
# Tensor parallelism across a fast fabric loses a little to its all-reduces; across PCIe a lot.
TENSOR_PARALLEL_EFFICIENCY_FAST = 0.90
TENSOR_PARALLEL_EFFICIENCY_PCIE = 0.50
DATA_PARALLEL_EFFICIENCY_PCIE = 0.80


def compute_peak_tflops(device: Device, dtype: Dtype) -> tuple[float | None, str]:
    """Dense peak for math in `dtype` and how it is reached; None when the GPU cannot do it.
    Weight-only formats (int4, and fp8/int8 on GPUs without such units) compute in 16-bit."""
    sixteen_bit = device.bf16_tflops or device.fp16_tflops
    if dtype is Dtype.FP32:
        if device.supports_tf32 and device.tf32_tflops:
            return device.tf32_tflops, "fp32 math on TF32 tensor cores"
        return device.fp32_tflops, "fp32 math"
    if dtype is Dtype.BF16:
        return (device.bf16_tflops, "bf16") if device.supports_bf16 else (None, "no BF16")
    if dtype is Dtype.FP16:
        return device.fp16_tflops or device.bf16_tflops, "fp16"
    if dtype is Dtype.FP8 and device.supports_fp8 and device.fp8_tflops:
        return device.fp8_tflops, "fp8 tensor cores"
    if dtype is Dtype.INT8 and device.int8_tops:
        return device.int8_tops, "int8 tensor cores"
    return sixteen_bit, f"{dtype} weights dequantised to 16-bit math"


def _tensor_parallel_efficiency(device: Device, parallelism: Parallelism) -> float:
    if parallelism.tensor_parallel == 1:
        return 1.0
    if parallelism.tensor_parallel <= device.fast_link_gpus:
        return TENSOR_PARALLEL_EFFICIENCY_FAST
    return TENSOR_PARALLEL_EFFICIENCY_PCIE


@dataclass(frozen=True)
class InferenceSpeed:
    decode_tokens_per_s_per_sequence: Range
    decode_tokens_per_s_total: Range
    prefill_seconds: Range
    seconds_per_request: Range
    bound: str  # "memory bandwidth" or "compute"
    compute_note: str


def _expected_weight_fraction_read(workload: Workload) -> float:
    """Share of the weights one decode step reads: all of a dense model; for a MoE everything
    but the routed experts, plus each expert that at least one sequence in the batch routes
    to (each token picks k of E: an expert is idle with probability (1 - k/E)^batch)."""
    arch = workload.architecture
    if not arch.params_routed_experts:
        return 1.0
    touched = 1 - (1 - arch.routed_fraction_per_token) ** workload.batch_size
    read = arch.params_total - arch.params_routed_experts * (1 - touched)
    return read / arch.params_total


def _weight_bytes_read(workload: Workload) -> float:
    """Weight bytes one decode step reads. A checkpoint stored at mixed widths (MXFP4 experts,
    bf16 attention) reads its experts' stored bytes, not their share of the parameters."""
    stored = workload.stored_weights
    if stored is None or not stored.routed_expert_bytes:
        return _inference_weight_bytes(workload) * _expected_weight_fraction_read(workload)
    idle = (1 - workload.architecture.routed_fraction_per_token) ** workload.batch_size
    return stored.weight_bytes - stored.routed_expert_bytes * idle


def inference_speed(workload: Workload, device: Device, parallelism: Parallelism) -> InferenceSpeed:
    arch = workload.architecture
    tp = parallelism.tensor_parallel
    peak, note = compute_peak_tflops(device, workload.weight_dtype)
    peak = peak or 0.0
    weight_bytes = _weight_bytes_read(workload) / tp
    kv_bytes = arch.kv_cache_bytes(
        workload.context_tokens, workload.batch_size, BYTES_PER_VALUE[workload.kv_dtype]
    ) / min(tp, arch.num_kv_heads)
    bytes_per_step = weight_bytes + kv_bytes
    bandwidth = device.bandwidth_gb_s * 1e9
    flops_per_step = 2 * arch.params_active * workload.batch_size / tp
    tp_efficiency = _tensor_parallel_efficiency(device, parallelism)
    memory_time = DECODE_BANDWIDTH_EFFICIENCY.inverted(bytes_per_step / bandwidth)
    compute_time = INFERENCE_COMPUTE_EFFICIENCY.inverted(flops_per_step / (peak * 1e12 or 1))
    step = Range(
        max(memory_time.low, compute_time.low) / tp_efficiency,
        max(memory_time.expected, compute_time.expected) / tp_efficiency,
        max(memory_time.high, compute_time.high) / tp_efficiency,
    )
    bound = "memory bandwidth" if memory_time.expected >= compute_time.expected else "compute"
    prefill_flops = 2 * arch.params_active * workload.context_tokens * workload.batch_size / tp
    prefill = INFERENCE_COMPUTE_EFFICIENCY.inverted(prefill_flops / (peak * 1e12 or 1)).scaled(
        1 / tp_efficiency
    )
    per_sequence = step.inverted(1.0)
    total = per_sequence.scaled(workload.batch_size)
    decode_seconds = step.scaled(workload.output_tokens)
    request = Range(
        prefill.low + decode_seconds.low,
        prefill.expected + decode_seconds.expected,
        prefill.high + decode_seconds.high,
    )
    return InferenceSpeed(per_sequence, total, prefill, request, bound, note)


@dataclass(frozen=True)
class TrainingTime:
    hours: Range
    flops: float
    flops_rule: str
    compute_note: str


def training_flops(workload: Workload) -> tuple[float, str]:
    """6·N·D for full training (forward 2, backward 4); LoRA skips weight gradients: 4·N·D;
    recomputation with gradient checkpointing adds another forward, 2·N·D. N is the active
    parameter count (MoE routes each token through a few experts)."""
    n = workload.architecture.params_active
    per_token = 4 if workload.task.adapters else 6
    if workload.gradient_checkpointing:
        per_token += 2
    rule = f"{per_token}·N·D"
    return per_token * n * workload.tokens_to_train, rule


def training_time(workload: Workload, device: Device, parallelism: Parallelism) -> TrainingTime:
    assert workload.task is not Task.INFERENCE
    dtype = workload.weight_dtype if workload.task is not Task.QLORA else Dtype.BF16
    peak, note = compute_peak_tflops(device, dtype)
    flops, rule = training_flops(workload)
    efficiency = _tensor_parallel_efficiency(device, parallelism)
    if parallelism.data_parallel > 1 and parallelism.gpu_count > device.fast_link_gpus:
        efficiency *= DATA_PARALLEL_EFFICIENCY_PCIE
    seconds = (
        TRAINING_MFU.scaled((peak or 0.0) * 1e12 * parallelism.gpu_count * efficiency).inverted(
            flops
        )
        if peak
        else Range(float("inf"), float("inf"), float("inf"))
    )
    return TrainingTime(seconds.scaled(1 / 3600), flops, rule, note)
