"""Memory against published measurements and the rules of thumb in sizing_reference.json."""

import pytest

from advisor.domain.sizing.architecture import architecture_from_params
from advisor.domain.sizing.bundled_models import bundled_models
from advisor.domain.sizing.layout import Parallelism
from advisor.domain.sizing.memory import memory_per_gpu
from advisor.domain.sizing.memory_breakdown import GIB, usable_bytes
from advisor.domain.sizing.precision import Dtype
from advisor.domain.sizing.workload import Optimizer, Task, Workload
from tests.advisor.reference import REFERENCE

VLLM = REFERENCE["vllm_measured_memory"]
DTYPES = {"bf16": Dtype.BF16, "float32": Dtype.FP32, "fp8 (runtime)": Dtype.FP8}


def llama_8b() -> Workload:
    return Workload(bundled_models()["llama-3.1-8b"].architecture())


@pytest.mark.parametrize(
    "row",
    [r for r in VLLM if "weights_gib" in r],
    ids=lambda r: f"tp{r['tp']}-{r.get('dtype', r.get('quantization', 'bf16'))}",
)
def test_predicted_weights_are_within_1_percent_of_vllms_measurement(row):
    dtype = DTYPES[row.get("dtype") or row.get("quantization") or "bf16"]
    workload = llama_8b().with_changes(weight_dtype=dtype)
    tp = row["tp"]
    weights = memory_per_gpu(workload, Parallelism(tp, tensor_parallel=tp)).weights / GIB
    assert weights == pytest.approx(row["weights_gib"], rel=0.01)


@pytest.mark.parametrize("row", [r for r in VLLM if "kv_tokens" in r], ids=lambda r: r["kv_dtype"])
def test_kv_tokens_for_vllms_measured_pool_are_within_1_percent(row):
    arch = llama_8b().architecture
    per_token = arch.kv_bytes_per_token({"bf16": 2, "fp8": 1}[row["kv_dtype"]])
    assert row["kv_pool_gib"] * GIB / per_token == pytest.approx(row["kv_tokens"], rel=0.01)


def test_vllms_activation_peak_is_matched_within_15_percent():
    """vLLM profiles 1.89 GiB of activations for Llama-3.1-8B at 8,192 batched tokens."""
    workload = llama_8b().with_changes(batch_size=2, context_tokens=4096)
    breakdown = memory_per_gpu(workload, Parallelism(1))
    assert (breakdown.activations + breakdown.logits) / GIB == pytest.approx(1.89, rel=0.15)


def test_7b_weights_at_fp16_are_about_14_gb():
    weights = memory_per_gpu(
        Workload(architecture_from_params(7_000_000_000), weight_dtype=Dtype.FP16), Parallelism(1)
    ).weights
    assert weights / 1e9 == pytest.approx(14.0)
    llama = bundled_models()["llama-2-7b"].architecture()
    exact = memory_per_gpu(Workload(llama, weight_dtype=Dtype.FP16), Parallelism(1)).weights
    assert exact / GIB == pytest.approx(12.55, abs=0.01)  # llama.cpp's F16 file: 12.55 GiB


def test_mixed_precision_adam_is_16_bytes_per_parameter_in_deepspeeds_layout():
    workload = Workload(
        architecture_from_params(7_000_000_000), task=Task.PRETRAIN, stack_name="deepspeed_zero"
    )
    states = memory_per_gpu(workload, Parallelism(1)).model_states
    assert states / 1e9 == pytest.approx(112.0)


def test_hugging_face_trainers_autocast_is_18_bytes_per_parameter_until_zero_takes_over():
    """model_memory_anatomy.md: weights "6 bytes * number of parameters for mixed precision
    training", gradients 4 ("always kept in fp32"), AdamW 8."""
    workload = Workload(architecture_from_params(7_000_000_000), task=Task.FULL)
    assert memory_per_gpu(workload, Parallelism(1)).model_states / 1e9 == pytest.approx(126.0)
    sharded = memory_per_gpu(workload, Parallelism(64, zero_stage=1)).model_states
    assert sharded / 1e9 == pytest.approx(28 + 12 * 7 / 64, abs=0.05)  # DeepSpeed's 2 + 2 + 12


@pytest.mark.parametrize(("stage", "gb"), [(0, 120.0), (1, 31.4), (2, 16.6), (3, 1.9)])
def test_zero_stages_on_7_5b_params_over_64_gpus_match_the_zero_paper(stage, gb):
    workload = Workload(
        architecture_from_params(7_500_000_000), task=Task.PRETRAIN, stack_name="deepspeed_zero"
    )
    states = memory_per_gpu(workload, Parallelism(64, zero_stage=stage)).model_states
    assert states / 1e9 == pytest.approx(gb, abs=0.05)


def test_qlora_brings_a_65b_model_onto_a_single_48_gb_card():
    """QLoRA paper: 65B fine-tuning in < 48 GB (r=64 on all linear layers, as the paper)."""
    workload = Workload(
        bundled_models()["llama-65b"].architecture(),
        task=Task.QLORA,
        lora_rank=64,
        context_tokens=512,
    )
    total = memory_per_gpu(workload, Parallelism(1)).total
    assert total < usable_bytes(48)
    full = memory_per_gpu(workload.with_changes(task=Task.FULL), Parallelism(1)).total
    assert full / 1e9 > 780  # "from > 780 GB"


def test_hf_memory_anatomy_measurement_is_matched_within_15_percent():
    """bert-large, fp32 AdamW, batch 4 x 512 on a V100: 14,949 MB measured with nvidia-smi."""
    workload = Workload(
        bundled_models()["bert-large-uncased"].architecture(),
        task=Task.FULL,
        weight_dtype=Dtype.FP32,
        optimizer=Optimizer.ADAMW,
        batch_size=4,
        context_tokens=512,
        gradient_checkpointing=False,
        flash_attention=False,
    )
    total = memory_per_gpu(workload, Parallelism(1)).total
    assert total / 1e6 == pytest.approx(14_949, rel=0.15)


@pytest.mark.parametrize(
    ("slug", "gib_at_1k"), [("llama-3.1-8b", 0.125), ("llama-3.1-70b", 0.3125)]
)
def test_kv_cache_matches_the_llama_3_1_announcement(slug, gib_at_1k):
    arch = bundled_models()[slug].architecture()
    assert arch.kv_cache_bytes(1024, 1, 2) / GIB == pytest.approx(gib_at_1k)


def test_zero_3_shards_a_lora_models_frozen_weights_too():
    arch = bundled_models()["llama-3.1-70b"].architecture()
    workload = Workload(arch, task=Task.LORA, stack_name="torchtune")
    one = memory_per_gpu(workload, Parallelism(8, zero_stage=2)).weights
    three = memory_per_gpu(workload, Parallelism(8, zero_stage=3)).weights
    assert three == pytest.approx(one / 8)
    # PEFT's FSDP recipe loads that base in fp32 for FSDP's mixed precision: twice the shard.
    peft = memory_per_gpu(workload.with_changes(stack_name="hf_peft"), Parallelism(8, zero_stage=3))
    assert peft.weights == pytest.approx(2 * three, rel=0.01)


def test_gradient_checkpointing_cuts_activation_memory():
    workload = Workload(bundled_models()["llama-3.1-8b"].architecture(), task=Task.FULL)
    on = memory_per_gpu(workload, Parallelism(1)).activations
    off = memory_per_gpu(workload.with_changes(gradient_checkpointing=False), Parallelism(1))
    assert off.activations > 5 * on
