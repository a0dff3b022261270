"""What a serving stack holds outside PyTorch depends on how its GPUs talk, and what a GPU
offers is what CUDA sees on it (issue 15): on PCIe-only parts there are no NVLink all-reduce
buffers, and an L4's ECC takes 1/16 of its 24 GiB."""

import pytest

from advisor.domain.sizing.bundled_models import bundled_models
from advisor.domain.sizing.memory_breakdown import GIB
from advisor.domain.sizing.recommend import rank_candidates
from advisor.domain.sizing.workload import Workload
from tests.advisor.devices import GPUS


def serving(gpu: str, count: int, stack: str = "sglang"):
    workload = Workload(
        bundled_models()["deepseek-r1-distill-qwen-32b"].architecture(),
        stack_name=stack,
        context_tokens=4096,
        gpu_memory_utilization=0.85,
    )
    workload.validate()
    (only,) = rank_candidates(workload, [GPUS[gpu]], {}, counts=(count,))
    return only


def test_gpus_on_pcie_hold_the_cuda_context_and_small_nccl_buffers_not_nvlinks():
    pcie = serving("L4", 4).memory.runtime_overhead
    nvlink = serving("H100-SXM", 4).memory.runtime_overhead
    # SGLang's 4x L4 log: 21.63 GiB free at start of the 22.04 CUDA sees; vLLM at TP 2 on H100s.
    assert pcie / GIB == pytest.approx(0.40)
    assert nvlink / GIB == pytest.approx(2.07)


def test_an_l4_offers_what_nvidia_smi_reports_less_the_drivers_share():
    usable = serving("L4", 1, stack="vllm").usable_bytes
    assert usable / GIB == pytest.approx(0.85 * (23_034 - 468) / 1024, rel=1e-9)
    # A part with no published nvidia-smi total keeps 99% of its datasheet capacity.
    assert GPUS["H200-SXM"].usable_memory_bytes == pytest.approx(0.99 * 141 * GIB)
