"""What share of a GPU's datasheet peaks real software reaches, each figure with its source.

Decode reads memory, prefill and training compute; a weight-only quantised kernel also spends
CUDA-core work on turning each stored weight back into 16 bits. Training utilisation is per
GPU architecture: the same stack realises a smaller share of a bigger peak.
"""

from advisor.domain.devices import Device
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
# Large-batch decode and prefill turn compute-bound; serving stacks reach 40-70% of peak
# (llm-analysis: "up to 0.7 for inference").
INFERENCE_COMPUTE_EFFICIENCY = Range(0.40, 0.55, 0.70)

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
# A stored width at or below this is a 4-bit format (int4, NF4, MXFP4, with their scales).
FOUR_BIT_CLASS_MAX_BITS = 5.0

# Training: the share of dense peak that the FLOPs a step executes reach (model FLOPs plus
# recomputation). Without recomputation this is MFU on 6·N·D.
# Ampere A100, published MFU on 6·N·D: Llama 2's whole runs, every GPU-hour counted, 38-43%
# (https://arxiv.org/abs/2307.09288, Table 2); Megatron-LM's 1T GPT on 3,072 A100 52% of peak
# counting its full recompute, 39% on 6·N·D (https://arxiv.org/abs/2104.04473); MosaicML's LLM
# Foundry on 8 A100-80GB (LLM_FOUNDRY, "A100 80GB"): 7B at 2k tokens without checkpointing
# 4,641 tokens/s/GPU = 59%, 13B 56%, with full checkpointing 7B at 4k 47% (63% counting the
# recompute), 30B at 2k 53% (70%). Expected 55%: a tuned stack's steady state (LLM Foundry,
# Megatron-LM counting its recompute: 52-59%); whole runs, every restart and evaluation in
# their GPU-hours, sit in the band's lower part.
TRAINING_UTILIZATION_AMPERE = Range(0.34, 0.55, 0.75)
# Hopper H100, on 6·N·D: Llama 3.1 70B and 405B whole runs 25.5% and 34.5%
# (https://huggingface.co/blog/llama31); Llama 3 405B 38-43% (https://arxiv.org/abs/2407.21783,
# Table 4); torchtitan's Llama 3.1 8B at 500 W 28% (https://github.com/pytorch/torchtitan/blob/
# b5bcd76c66d0acb1a08b176d9639425bc55e0b2a/benchmarks/llama3_h100_202412_torchtitan.md);
# LLM Foundry on 8 H100-80GB: 7B at 2k 43% (10,643 tokens/s/GPU, 2.29x its A100 run), 13B 37%,
# 30B with full checkpointing 36% (49% counting the recompute; 2.19x its A100 run). Expected
# 38%: an H100 then trains 2.19x as fast as an A100 (0.38 × 989.5 against 0.55 × 312), as LLM
# Foundry measures on the same models and settings, not the 3.2x of the datasheet peaks.
TRAINING_UTILIZATION_HOPPER = Range(0.22, 0.38, 0.52)
# Architectures without published runs here (Ada, Blackwell, Volta, CDNA, Gaudi, TPU): the
# spread of the runs above, uncalibrated for the architecture (low confidence).
TRAINING_UTILIZATION_DEFAULT = Range(0.25, 0.38, 0.50)
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
