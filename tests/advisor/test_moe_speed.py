"""Mixture-of-experts speed (advisor/domain/sizing/speed/moe.py, issue 23): a MoE is slower
than a dense model of its active size, at decode and in training, and expert parallelism's
all-to-all costs time that grows with the tokens."""

import pytest

from advisor.domain.planning.timing import ReplicaTimes
from advisor.domain.sizing.architecture import architecture_from_params
from advisor.domain.sizing.bundled_models import bundled_models
from advisor.domain.sizing.layout import Parallelism
from advisor.domain.sizing.precision import Dtype
from advisor.domain.sizing.speed import inference_speed, training_time
from advisor.domain.sizing.speed.inference import prefill_seconds
from advisor.domain.sizing.speed.moe import (
    DECODE_SECONDS_PER_MOE_LAYER,
    PREFILL_SECONDS_PER_EXPERT,
    all_to_all_seconds,
    decode_expert_seconds,
    is_moe,
    moe_assumptions,
    prefill_expert_seconds,
    tokens_per_expert,
)
from advisor.domain.sizing.workload import Task, Workload
from tests.advisor.devices import GPUS

MOE = bundled_models()["qwen3-30b-a3b"].architecture()


def _dense_of_active_size():
    return architecture_from_params(MOE.params_active)


def test_the_moe_fields_are_read_from_the_config():
    assert is_moe(MOE)
    assert (MOE.moe_layers, MOE.experts_per_token) == (48, 8)
    assert tokens_per_expert(MOE, 4 * 4096) == pytest.approx(4 * 4096 * 8 / 128)
    assert not is_moe(_dense_of_active_size())


def test_batch_1_decode_is_slower_per_active_parameter_than_a_dense_model_of_that_size():
    device = GPUS["A100-80GB-SXM"]
    one = Parallelism(1)
    moe = inference_speed(Workload(MOE, batch_size=1, output_tokens=128), device, one)
    dense = inference_speed(
        Workload(_dense_of_active_size(), batch_size=1, output_tokens=128), device, one
    )
    assert moe.decode_tokens_per_s_per_sequence.expected < (
        0.7 * dense.decode_tokens_per_s_per_sequence.expected
    )


def test_a_decode_step_pays_for_the_experts_it_touches_in_bytes_not_in_a_fixed_cost_each():
    # TensorRT-LLM 0.21's DeepSeek-R1 on 8 H200s: 8 sequences touch ~57 of each layer's 256
    # experts where one touches 8, and the step is 4.4 ms longer, 3.3 ms of it their bytes.
    assert decode_expert_seconds(MOE).expected > 0
    assert decode_expert_seconds(_dense_of_active_size()).expected == 0
    device, one = GPUS["H100-SXM"], Parallelism(1)
    steps = [
        inference_speed(Workload(MOE, batch_size=batch, output_tokens=128), device, one)
        .decode_tokens_per_s_per_sequence.inverted(1.0)
        .expected
        for batch in (1, 8, 64)
    ]
    assert steps[0] < steps[1] < steps[2]  # more experts read
    # The fixed part is per MoE layer, whatever the batch (the calibration set's batch-8 row,
    # 66% slow under a cost per expert touched, holds the whole figure).
    per_layer = decode_expert_seconds(MOE).expected / MOE.moe_layers
    assert per_layer == pytest.approx(DECODE_SECONDS_PER_MOE_LAYER.expected)


def _training(arch, device_key, dtype="bf16", stack="fsdp2"):
    workload = Workload(
        arch, task=Task.PRETRAIN, weight_dtype=Dtype(dtype), context_tokens=4096, batch_size=4,
        stack_name=stack, train_tokens=10**9,
    )  # fmt: skip
    return training_time(workload, GPUS[device_key], Parallelism(8, zero_stage=3))


def test_training_a_30b_a3b_on_8_gpus_is_slower_than_a_dense_model_of_its_active_size():
    moe = _training(MOE, "H100-SXM").hours
    dense = _training(_dense_of_active_size(), "H100-SXM").hours
    assert moe.expected > 1.15 * dense.expected
    assert moe.low > dense.low


def test_fp8_does_not_speed_up_the_routed_experts():
    bf16 = _training(MOE, "H100-SXM", "bf16", "megatron").hours.expected
    fp8 = _training(MOE, "H100-SXM", "fp8", "megatron").hours.expected
    dense_bf16 = _training(_dense_of_active_size(), "H100-SXM", "bf16", "megatron").hours.expected
    dense_fp8 = _training(_dense_of_active_size(), "H100-SXM", "fp8", "megatron").hours.expected
    assert bf16 / fp8 < dense_bf16 / dense_fp8


def test_the_all_to_all_costs_time_that_grows_with_tokens():
    device = GPUS["H100-SXM"]
    small = all_to_all_seconds(MOE, device, 8, 1024)
    large = all_to_all_seconds(MOE, device, 8, 16384)
    assert 0 < small.expected < large.expected
    assert all_to_all_seconds(MOE, device, 1, 16384).expected == 0


def test_the_answer_says_what_it_assumed_of_a_moe():
    (item,) = moe_assumptions(MOE, serving=False)
    assert "top-8" in item and "all-to-all" in item
    # Served, sized as tensor parallel: what expert parallelism would change, said once.
    (_, serving) = moe_assumptions(MOE, serving=True)
    assert "expert parallelism on the same node holds the same memory" in serving
    assert moe_assumptions(_dense_of_active_size(), serving=True) == []
    rule = _training(MOE, "H100-SXM").recompute_rule
    assert "routed experts" in rule and "expert parallelism 8" in rule


def test_a_prefill_pays_per_expert_it_touches_and_a_long_prompt_touches_them_all():
    every = prefill_expert_seconds(MOE, 4096).expected
    # 48 MoE layers x 128 experts: a 4,096-token prompt (x top-8) leaves none idle.
    assert every == pytest.approx(48 * 128 * PREFILL_SECONDS_PER_EXPERT.expected)
    assert prefill_expert_seconds(MOE, 1).expected == pytest.approx(every * 8 / 128)
    assert prefill_expert_seconds(_dense_of_active_size(), 4096).expected == 0.0


def test_a_moe_first_token_costs_more_than_a_dense_model_of_its_active_size():
    device, one = GPUS["H100-SXM"], Parallelism(1)
    moe = prefill_seconds(Workload(MOE, context_tokens=1025, output_tokens=1), device, one)
    dense = prefill_seconds(
        Workload(_dense_of_active_size(), context_tokens=1025, output_tokens=1), device, one
    )
    assert moe.expected > dense.expected + prefill_expert_seconds(MOE, 1024).expected * 0.9


def test_an_iteration_that_decodes_and_prefills_pays_the_fixed_expert_cost_once():
    times = ReplicaTimes(
        Workload(MOE, context_tokens=2049, output_tokens=128), GPUS["H100-SXM"], Parallelism(1)
    )
    once = min(decode_expert_seconds(MOE).expected, prefill_expert_seconds(MOE, 2048).expected)
    # The weights read once and the matmuls fused share less than the experts' fixed cost here.
    assert times.shared(2048, 64).expected >= once
