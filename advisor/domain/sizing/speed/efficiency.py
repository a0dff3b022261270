"""What share of a GPU's datasheet peaks real software reaches, each figure with its source.

Decode reads memory, prefill and training compute; a weight-only quantised kernel also spends
CUDA-core work on turning each stored weight back into 16 bits. Training utilisation is per
GPU architecture: the same stack realises a smaller share of a bigger peak.
"""

from advisor.domain.devices import Device
from advisor.domain.provenance import fitted
from advisor.domain.ranges import Range
from advisor.domain.sizing.precision import Dtype

GPT_FAST = (
    "https://github.com/pytorch-labs/gpt-fast/blob/32971d3129541c5bfb4f715abc33d1c5f408d204/"
    "README.md"
)
LLM_FOUNDRY = (
    "https://github.com/mosaicml/llm-foundry/blob/8c8dd48f72168c5d51e2f7b151595892a8fba43d/"
    "scripts/train/benchmarking/README.md"
)

# Batch-1 decode reaches 48-86% of the bandwidth roofline in the published runs
# (llama.cpp, MLC, ExLlama on RTX 3090 Ti / 4090 / Apple M-series, sizing_reference.json),
# median about 70%; gpt-fast's bf16 Llama-2-7B on an A100 reads 1,397 of 2,039 GB/s (69%).
DECODE_BANDWIDTH_EFFICIENCY = Range(0.45, 0.70, 0.88)
fitted(
    "DECODE_BANDWIDTH_EFFICIENCY",
    # Expected: the bf16 row's 69%. The top, widened from 0.85 to 0.88 with these rows in the
    # set, holds Llama-2-70B int8 on one GPU (0.861 of the roofline at our other terms).
    fitted_on=("gpt-fast-llama-2-7b-bf16-1gpu", "gpt-fast-llama-2-70b-int8-1gpu"),
)
# Large-batch decode and prefill turn compute-bound; serving stacks reach 40-70% of peak
# (llm-analysis: "up to 0.7 for inference"). The band for a GPU without a measured matmul
# ceiling (below).
INFERENCE_COMPUTE_EFFICIENCY = Range(0.40, 0.55, 0.70)
fitted(
    "INFERENCE_COMPUTE_EFFICIENCY",
    fitted_on=(),
    source="llm-analysis's guidance (up to 0.7 for inference)",
)
ML_ENGINEERING = (
    "https://github.com/stas00/ml-engineering/blob/b9e29720eebd4aa946fa9678975385efbc90a777/"
    "compute/accelerator/README.md"
)
# The largest share of the datasheet peak a tuned matmul reaches (Maximum Achievable Matmul
# FLOPS, ML_ENGINEERING, "Maximum Achievable Matmul FLOPS comparison table"): A100 SXM bf16
# 271.2 of 312 TFLOPS (86.9%); H100 SXM bf16 794.5 of 989 (80.3%), fp8 1,402.6 of 1,979
# (70.9%). The bigger the peak, the smaller the share: the same prefill runs at a larger share
# of an A100's peak than of an H100's, and smaller still in fp8.
MATMUL_CEILING_BY_ARCHITECTURE = {
    ("ampere", False): 0.869,
    ("hopper", False): 0.803,
    ("hopper", True): 0.709,
}
fitted(
    "MATMUL_CEILING_BY_ARCHITECTURE",
    fitted_on=(),
    source="ml-engineering's Maximum Achievable Matmul FLOPS table",
)
# What a serving stack's prefill reaches of that ceiling: its GEMMs near it, its attention,
# norms and activations below. TensorRT-LLM's 2,048-token first-token latencies (performance.md
# at 138f96d, "Low Latency"; the GEMMs' 2·N FLOPs per token, less our per-layer overhead and
# all-reduces) put it at 80% (Llama 7B fp16, A100), 82% (70B fp16, TP 4, A100), 78% (70B fp8,
# TP 4, H100) and 64% (7B fp8, H100, whose fp16 attention is a larger share): mean 76%,
# expected 75%, the band holding all four.
INFERENCE_SHARE_OF_MATMUL_CEILING = Range(0.60, 0.75, 0.90)
fitted(
    "INFERENCE_SHARE_OF_MATMUL_CEILING",
    fitted_on=(
        "trtllm-llama-2-7b-h100-sxm-tp1-2048-first-token",
        "trtllm-llama-2-70b-h100-sxm-tp4-2048-first-token",
        "trtllm-llama-2-7b-a100-80gb-sxm-tp1-2048-first-token",
        "trtllm-llama-2-70b-a100-80gb-sxm-tp4-2048-first-token",
    ),
)

# A prefill (context phase) pays a fixed cost per layer beyond its FLOPs or its weight reads:
# its many small kernels launch one by one, outside the CUDA graphs decode runs in. Derived
# from TensorRT-LLM's first-token latencies for 128-token prompts at batch 1
# (https://github.com/NVIDIA/TensorRT-LLM/blob/138f96d45f90b9667426f7c47297d8c06bafac73/docs/
# source/performance.md, "Low Latency"): beyond this model's read-or-compute time, Llama 7B
# fp8 on an H100 takes 7 ms (0.13 ms per layer), 70B fp8 at TP 4 26 ms (0.16), 7B fp16 on an
# A100 16 ms (0.19), 70B fp16 at TP 4 47 ms (0.19).
PREFILL_LAYER_OVERHEAD_S = Range(0.12e-3, 0.17e-3, 0.20e-3)
fitted(
    "PREFILL_LAYER_OVERHEAD_S",
    fitted_on=(
        "trtllm-llama-2-7b-h100-sxm-tp1-128-first-token",
        "trtllm-llama-2-70b-h100-sxm-tp4-128-first-token",
        "trtllm-llama-2-7b-a100-80gb-sxm-tp1-128-first-token",
        "trtllm-llama-2-70b-a100-80gb-sxm-tp4-128-first-token",
    ),
)
# Weight-only kernels (GPTQ/AWQ int4, int8 W8A16, fp8 on GPUs without fp8 units) unpack and
# scale every weight on the CUDA cores before the 16-bit math: FLOPs per stored weight, run at
# the fp32 (non-tensor) peak with the decode efficiency. Derived from gpt-fast's A100 table
# (GPT_FAST, Benchmarks): at the bf16 row's 1,397 GB/s, Llama-2-7B int8 (155.58 tok/s, 6.87 GB
# read) leaves 1.51 ms per token beyond its reads, 3.0 FLOPs per weight at 19.5 TFLOPS;
# Llama-3.1-8B int8 (137.64 tok/s) 3.3; int4 G=32 (196.80 tok/s, 4.38 GB) 1.94 ms, 3.9. This
# is why int4 decode is dequantisation-bound on GPUs whose fp32 peak is small beside their
# bandwidth (A100: 9.6 FLOPs per byte) and not on those where it is large (RTX 4090: 82;
# MLC's 4-bit Llama-2-7B there reads at 72% of the roofline).
DEQUANT_FLOPS_PER_WEIGHT_4BIT = 3.9
DEQUANT_FLOPS_PER_WEIGHT_8BIT = 3.1
# Each beside the bf16 row, whose rate gives the bandwidth the reads run at (gpt-fast's
# Llama-3.1-8B int8 figure is not a calibration row).
fitted(
    "DEQUANT_FLOPS_PER_WEIGHT_4BIT",
    fitted_on=("gpt-fast-llama-2-7b-int4-1gpu", "gpt-fast-llama-2-7b-bf16-1gpu"),
)
fitted(
    "DEQUANT_FLOPS_PER_WEIGHT_8BIT",
    fitted_on=("gpt-fast-llama-2-7b-int8-1gpu", "gpt-fast-llama-2-7b-bf16-1gpu"),
)
# A stored width at or below this is a 4-bit format (int4, NF4, MXFP4, with their scales).
FOUR_BIT_CLASS_MAX_BITS = 5.0

# Training: the share of dense peak that the FLOPs a step executes reach: the model's 6·N·D,
# the attention core's products and any recomputation (what LLM Foundry publishes as HFU).
# Ampere A100: MosaicML's LLM Foundry on 8 A100-80GB (LLM_FOUNDRY, "A100 80GB"): 7B at 2k
# tokens without checkpointing 64% (4,641 tokens/s/GPU), 13B 60%, with full checkpointing 7B
# at 4k 73%, 30B at 2k 74%; Megatron-LM's 1T GPT on 3,072 A100: 52%
# (https://arxiv.org/abs/2104.04473); Llama 2's whole runs, every GPU-hour counted, 41-45%
# (https://arxiv.org/abs/2307.09288, Table 2: 38-43% on 6·N·D). Expected 60%, a tuned
# stack's steady state; whole runs sit in the band's lower part.
TRAINING_UTILIZATION_AMPERE = Range(0.34, 0.60, 0.78)
fitted(
    "TRAINING_UTILIZATION_AMPERE",
    fitted_on=(
        "llm-foundry-mpt-7b-2048-a100-80gb-sxm-throughput",
        "llm-foundry-mpt-13b-2048-a100-80gb-sxm-throughput",
        "llm-foundry-mpt-7b-4096-a100-80gb-sxm-throughput",
        "llm-foundry-mpt-30b-2048-a100-80gb-sxm-throughput",
        "llama2-paper-llama-2-7b-gpu-hours",
        "llama2-paper-llama-2-13b-gpu-hours",
        "llama2-paper-llama-2-70b-gpu-hours",
    ),
)
# Hopper H100, counted the same way: LLM Foundry on 8 H100-80GB: 7B at 2k 46% (10,643
# tokens/s/GPU, 2.29x its A100 run), 13B 40%, 7B at 4k with full checkpointing 54%, 30B 51%
# (2.19x its A100 run); Llama 3 405B 38-43% (https://arxiv.org/abs/2407.21783, Table 4);
# torchtitan's Llama 3.1 8B at 500 W with selective checkpointing 37%
# (https://github.com/pytorch/torchtitan/blob/b5bcd76c66d0acb1a08b176d9639425bc55e0b2a/
# benchmarks/llama3_h100_202412_torchtitan.md); Llama 3.1 70B and 405B whole runs 27% and
# 36% (https://huggingface.co/blog/llama31: 25.5% and 34.5% on 6·N·D). Expected 40%, their
# median: an H100 then trains 2.1x as fast as an A100 (0.40 × 989.5 against 0.60 × 312), as
# LLM Foundry measures on the same models and settings (2.2-2.3x), not the 3.2x of the peaks.
TRAINING_UTILIZATION_HOPPER = Range(0.23, 0.40, 0.55)
fitted(
    "TRAINING_UTILIZATION_HOPPER",
    fitted_on=(
        "llm-foundry-mpt-7b-2048-h100-sxm-throughput",
        "llm-foundry-mpt-13b-2048-h100-sxm-throughput",
        "llm-foundry-mpt-7b-4096-h100-sxm-throughput",
        "llm-foundry-mpt-30b-2048-h100-sxm-throughput",
        "torchtitan-llama-3.1-8b-fsdp-8gpu-throughput",
        "llama31-llama-3.1-70b-gpu-hours",
        "llama31-llama-3.1-405b-gpu-hours",
    ),
)
# Architectures without published runs here (Ada, Blackwell, Volta, CDNA, Gaudi, TPU): the
# spread of the runs above, uncalibrated for the architecture (low confidence).
TRAINING_UTILIZATION_DEFAULT = Range(0.25, 0.38, 0.50)
fitted(
    "TRAINING_UTILIZATION_DEFAULT",
    # The engine's first MFU band: Llama 2's and Llama 3.1's whole runs (with Llama 3 405B's
    # steady state and Megatron-LM's 1T GPT, which are not rows).
    fitted_on=(
        "llama2-paper-llama-2-7b-gpu-hours",
        "llama2-paper-llama-2-13b-gpu-hours",
        "llama2-paper-llama-2-70b-gpu-hours",
        "llama31-llama-3.1-70b-gpu-hours",
        "llama31-llama-3.1-405b-gpu-hours",
    ),
)
TRAINING_UTILIZATION_BY_ARCHITECTURE = {
    "ampere": TRAINING_UTILIZATION_AMPERE,
    "hopper": TRAINING_UTILIZATION_HOPPER,
}


def training_utilization(device: Device) -> tuple[Range, str]:
    """The utilisation band for training on `device`, and which architecture's runs set it."""
    family = device.architecture.split(" ")[0].lower()
    band = TRAINING_UTILIZATION_BY_ARCHITECTURE.get(family)
    if band is None:
        return TRAINING_UTILIZATION_DEFAULT, "no published runs for this architecture"
    return band, f"published {device.architecture} runs"


def inference_compute_efficiency(device: Device, dtype: Dtype) -> Range:
    """The share of `device`'s dense peak in `dtype` that prefill and compute-bound decode
    reach: the share of the matmul ceiling where the architecture's is measured, else the
    serving stacks' band."""
    family = device.architecture.split(" ")[0].lower()
    fp8_math = dtype is Dtype.FP8 and device.supports_fp8
    ceiling = MATMUL_CEILING_BY_ARCHITECTURE.get((family, fp8_math))
    if ceiling is None:
        return INFERENCE_COMPUTE_EFFICIENCY
    return INFERENCE_SHARE_OF_MATMUL_CEILING.scaled(ceiling)


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
