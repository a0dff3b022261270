"""Serving memory follows what the stack loads: vLLM pads gpt-oss's MXFP4 experts to its MoE
kernel's tiles (issue 23).

vLLM logs 7.01 GiB of weights per GPU for gpt-oss-20b at TP 2 (the figure issue 23 quotes),
9% above the stored bytes halved (6.41 GiB). Mxfp4MoEMethod.create_weights allocates the
experts at padded shapes: with Marlin's weight-only FP4 kernel (every NVIDIA GPU before Hopper)
each GPU's intermediate width of 1,440 becomes 1,536 and the hidden 2,880 becomes 3,072.
"""

import pytest

from advisor.domain.sizing.bundled_models import bundled_models
from advisor.domain.sizing.kernel_padding import padded_expert_fraction, pads_weights
from advisor.domain.sizing.memory_breakdown import GIB
from advisor.domain.sizing.recommend import rank_candidates
from advisor.domain.sizing.workload import Workload
from tests.advisor.devices import GPUS

VLLM_LOGGED_TP2_WEIGHTS_GIB = 7.01  # issue 23: vLLM's "Model loading took" for gpt-oss-20b


def _weights_gib(slug: str, gpu: str, count: int, stack: str = "vllm") -> float:
    arch = bundled_models()[slug].architecture()
    workload = Workload(arch, context_tokens=4096, stack_name=stack)
    (candidate,) = rank_candidates(workload, [GPUS[gpu]], {}, counts=(count,))
    return candidate.memory.weights / GIB


def test_gpt_oss_20b_at_tp2_loads_what_vllm_logs_not_the_stored_bytes_halved():
    stored_half = bundled_models()["gpt-oss-20b"].architecture().stored_weights.weight_bytes / 2
    loaded = _weights_gib("gpt-oss-20b", "A100-80GB-SXM", 2)
    assert loaded == pytest.approx(VLLM_LOGGED_TP2_WEIGHTS_GIB, rel=0.01)
    assert loaded > stored_half / GIB * 1.08


def test_marlin_pads_each_gpus_expert_width_to_128_and_the_hidden_width_to_256():
    arch = bundled_models()["gpt-oss-20b"].architecture()
    ampere = padded_expert_fraction(arch, "NVIDIA", "Ampere", 2)
    assert ampere == pytest.approx((1536 * 3072) / (1440 * 2880))


def test_hopper_triton_kernels_pad_only_the_expert_width_to_64():
    arch = bundled_models()["gpt-oss-20b"].architecture()
    assert padded_expert_fraction(arch, "NVIDIA", "Hopper", 1) == 1.0  # 2,880 is 45 x 64
    assert padded_expert_fraction(arch, "NVIDIA", "Hopper", 2) == pytest.approx(1472 / 1440)
    unpadded = bundled_models()["gpt-oss-20b"].architecture().stored_weights.weight_bytes / GIB
    assert _weights_gib("gpt-oss-20b", "H100-SXM", 1) == pytest.approx(unpadded)


def test_blackwell_flashinfer_pads_both_widths_to_256():
    arch = bundled_models()["gpt-oss-20b"].architecture()
    assert padded_expert_fraction(arch, "NVIDIA", "Blackwell", 1) == pytest.approx(
        (3072 * 3072) / (2880 * 2880)
    )


def test_only_vllm_with_mxfp4_experts_pads():
    gpt_oss = bundled_models()["gpt-oss-20b"].architecture()
    dense = bundled_models()["llama-3.1-8b"].architecture()
    assert pads_weights(gpt_oss, "vllm")
    assert not pads_weights(gpt_oss, "sglang")
    assert not pads_weights(dense, "vllm")
    assert padded_expert_fraction(gpt_oss, "AMD", "CDNA 3", 2) == 1.0
