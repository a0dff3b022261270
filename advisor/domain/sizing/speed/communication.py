"""Tensor parallelism's all-reduces: a latency per call that grows with the group, plus the
bytes over the link the catalogue gives (NVLink inside a node, PCIe beyond a bridge).

Megatron-style tensor parallelism all-reduces each layer's attention and MLP outputs: two
all-reduces per layer per forward pass (Shoeybi et al. 2019, https://arxiv.org/abs/1909.08053,
section 3), two more in the backward pass. They sit on the critical path: a decode step waits
for them, which is why a small model at TP 8 gains far less than 8x.
"""

import math

from advisor.domain.devices import Device
from advisor.domain.provenance import fitted
from advisor.domain.ranges import Range

ALLREDUCES_PER_LAYER_FORWARD = 2
ALLREDUCES_PER_LAYER_BACKWARD = 2

# Latency of one all-reduce of a decode step's few kilobytes: a fixed cost plus a cost per
# doubling of the group. Derived from gpt-fast's tensor-parallel table on 8x A100 NVLink
# (https://github.com/pytorch-labs/gpt-fast/blob/32971d3129541c5bfb4f715abc33d1c5f408d204/
# README.md, "Tensor Parallelism"): what a step takes beyond the single-GPU step divided by the
# degree, over 2 all-reduces x 32 layers, is 18 / 24 / 29 us at TP 2 / 4 / 8 for Llama-2-7B
# and 22 / 30 / 36 us for Llama-3.1-8B: 12 us + 6 us per doubling, within 30% of each. Behind
# one PCIe switch NCCL takes about the same, 19-22 us for 4-16 KB on 4 GPUs inside a CUDA graph
# (https://github.com/haohervchb/sglang-V100/pull/2): PCIe costs in bytes, not in latency.
# Custom one-shot all-reduces (vLLM's, TensorRT-LLM's) reach 4-7 us there; they are not
# modelled (low confidence below the range's low end).
ALLREDUCE_FIXED_S = Range(8.4e-6, 12e-6, 15.6e-6)
ALLREDUCE_PER_DOUBLING_S = Range(4.2e-6, 6e-6, 7.8e-6)
# gpt-fast's Llama-3.1-8B tensor-parallel figures are not calibration rows.
_GPT_FAST_TP_ROWS = (
    "gpt-fast-llama-2-7b-bf16-1gpu",
    "gpt-fast-llama-2-7b-bf16-tp2",
    "gpt-fast-llama-2-7b-bf16-tp4",
    "gpt-fast-llama-2-7b-bf16-tp8",
)
fitted("ALLREDUCE_FIXED_S", fitted_on=_GPT_FAST_TP_ROWS)
fitted("ALLREDUCE_PER_DOUBLING_S", fitted_on=_GPT_FAST_TP_ROWS)

# What an all-reduce's bus bandwidth reaches of the catalogue's link figure (which counts both
# directions): nccl-tests on 8x A100 NVLink (600 GB/s) measure about 200 GB/s bus bandwidth
# (https://github.com/NVIDIA/nccl-tests/issues/149); on 8x RTX 5090 over PCIe Gen5 (128 GB/s)
# 28 GB/s, 35 GB/s on 4 (https://github.com/NVIDIA/nccl/issues/1639).
ALLREDUCE_BUS_FRACTION_FAST = 0.33
ALLREDUCE_BUS_FRACTION_PCIE = 0.25
_NCCL_TESTS = "nccl-tests' bus bandwidths (NVIDIA/nccl-tests#149, NVIDIA/nccl#1639)"
fitted("ALLREDUCE_BUS_FRACTION_FAST", fitted_on=(), source=_NCCL_TESTS)
fitted("ALLREDUCE_BUS_FRACTION_PCIE", fitted_on=(), source=_NCCL_TESTS)


def allreduce_bus_gb_s(device: Device, group: int) -> float:
    """The bus bandwidth an all-reduce over `group` of these GPUs reaches."""
    over_fast_link = group <= device.fast_link_gpus
    fraction = ALLREDUCE_BUS_FRACTION_FAST if over_fast_link else ALLREDUCE_BUS_FRACTION_PCIE
    return device.link_gb_s(group) * fraction


def allreduce_seconds(device: Device, group: int, message_bytes: float) -> Range:
    """One all-reduce of `message_bytes` over `group` GPUs: latency, plus a ring's
    2·(n-1)/n of the message over the bus bandwidth."""
    if group <= 1:
        return Range(0.0, 0.0, 0.0)
    doublings = math.log2(group)
    transfer = 2 * (group - 1) / group * message_bytes / (allreduce_bus_gb_s(device, group) * 1e9)
    return Range(
        ALLREDUCE_FIXED_S.low + ALLREDUCE_PER_DOUBLING_S.low * doublings + transfer,
        ALLREDUCE_FIXED_S.expected + ALLREDUCE_PER_DOUBLING_S.expected * doublings + transfer,
        ALLREDUCE_FIXED_S.high + ALLREDUCE_PER_DOUBLING_S.high * doublings + transfer,
    )
