"""Speed against published measurements: decode throughput and training GPU-hours."""

import pytest

from advisor.domain.devices import Device
from advisor.domain.sizing.bundled_models import bundled_models
from advisor.domain.sizing.layout import Parallelism
from advisor.domain.sizing.precision import Dtype
from advisor.domain.sizing.speed import (
    DECODE_BANDWIDTH_EFFICIENCY,
    inference_speed,
    training_time,
    training_utilization,
)
from advisor.domain.sizing.workload import Task, Workload
from tests.advisor.devices import made_up_device
from tests.advisor.reference import REFERENCE


def device(**specs) -> Device:
    return made_up_device(**{"supports_tf32": True, "supports_bf16": True, **specs})


@pytest.mark.parametrize(
    "row",
    REFERENCE["decode_throughput_vs_roofline"],
    ids=lambda r: f"{r['workload']} {r['hardware']}",
)
def test_published_decode_speeds_fall_inside_our_bandwidth_efficiency_range(row):
    roofline = row["peak_bw_GBps"] * 1e9 / row["weight_bytes_read_per_token"]
    low, high = (
        roofline * DECODE_BANDWIDTH_EFFICIENCY.low,
        roofline * DECODE_BANDWIDTH_EFFICIENCY.high,
    )
    assert low <= row["measured_tok_s"] <= high


def test_llama_7b_fp16_on_an_rtx_4090_is_predicted_around_llama_cpps_61_tokens_per_second():
    rtx4090 = device(bandwidth_gb_s=1008, bf16_tflops=165.2, fp16_tflops=165.2, memory_gib=24)
    workload = Workload(
        bundled_models()["llama-2-7b"].architecture(),
        weight_dtype=Dtype.FP16,
        kv_dtype=Dtype.FP16,
        context_tokens=128,
    )
    speed = inference_speed(workload, rtx4090, Parallelism(1)).decode_tokens_per_s_per_sequence
    assert speed.low <= 61.03 <= speed.high
    assert speed.expected == pytest.approx(61.03, rel=0.2)


ARCHITECTURE_OF = {"A100-80GB": "Ampere", "H100-80GB": "Hopper"}


@pytest.mark.parametrize(
    "row",
    [r for r in REFERENCE["training_time_calibration"] if r["gpu"] in ARCHITECTURE_OF],
    ids=lambda r: r["run"],
)
def test_published_training_gpu_hours_fall_inside_our_range(row):
    from advisor.domain.sizing.architecture import architecture_from_params

    gpu = device(bf16_tflops=row["peak_bf16_tflops"], architecture=ARCHITECTURE_OF[row["gpu"]])
    workload = Workload(
        architecture_from_params(int(row["params"])),
        task=Task.PRETRAIN,
        train_tokens=int(row["tokens"]),
        gradient_checkpointing=False,  # 6·N·D, as the published MFU figures count
    )
    hours = training_time(workload, gpu, Parallelism(1)).hours
    assert hours.low <= row["gpu_hours"] <= hours.high
    implied_mfu = row["implied_MFU_pct_6ND"] / 100
    band, _ = training_utilization(gpu)
    assert band.low <= implied_mfu <= band.high


def test_moe_decode_reads_only_the_active_experts_at_batch_1():
    mixtral = Workload(bundled_models()["mixtral-8x7b-v0.1"].architecture(), context_tokens=16)
    dense_like = mixtral.with_changes(batch_size=64)
    gpu = device(bandwidth_gb_s=3350, bf16_tflops=989.5)
    one = inference_speed(mixtral, gpu, Parallelism(2, tensor_parallel=2))
    many = inference_speed(dense_like, gpu, Parallelism(2, tensor_parallel=2))
    # 12.9B of 46.7B parameters are read per token at batch 1: far above the dense roofline.
    dense_roofline = 3350e9 / 2 / (46.7e9 * 2 / 2)
    assert one.decode_tokens_per_s_per_sequence.expected > 2.5 * dense_roofline * 0.7
    assert (
        many.decode_tokens_per_s_per_sequence.expected
        < one.decode_tokens_per_s_per_sequence.expected
    )


def test_large_batch_decode_turns_compute_bound():
    workload = Workload(bundled_models()["llama-3.1-8b"].architecture(), context_tokens=64)
    gpu = device(bandwidth_gb_s=3350, bf16_tflops=989.5)
    assert inference_speed(workload, gpu, Parallelism(1)).bound == "memory bandwidth"
    big = workload.with_changes(batch_size=2048)
    assert inference_speed(big, gpu, Parallelism(1)).bound == "compute"
