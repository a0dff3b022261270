"""Recommend only what the stack runs on (advisor/domain/compatibility.py, the table sizing and
right-sizing read; portability/stack_moves.py, the other stacks).

Before: 4-bit QLoRA with HF + PEFT (bitsandbytes) and ZeRO-3 was recommended on 8x TPU v6e,
and with TensorRT-LLM Llama 3.1 8B "fit" on MI300X, Gaudi 3, TPU v6e and Trainium2.
"""

import csv

import pytest

from advisor.domain.compatibility import (
    PLATFORM_NAMES,
    TABLE,
    Support,
    platform_of,
    support,
    table_rows,
)
from advisor.domain.compatibility.moves import MOVES, REWRITE
from advisor.domain.compatibility.sources import READ_ON
from advisor.domain.sizing.stacks import STACKS
from catalog.services.offers import BUNDLED_DATA_DIR

URL = "/api/v1/advice/sizing"
EVERY = {"max_candidates": 0, "include_rejected": True}
NOT_FOR_BITSANDBYTES = ("tpu-", "aws-", "intel-gaudi")


def _catalogue_platforms() -> dict[str, str]:
    with (BUNDLED_DATA_DIR / "gpus.csv").open(newline="") as table:
        return {
            r["canonical_key"]: platform_of(r["vendor"], r["architecture"])
            for r in csv.DictReader(table)
        }


def test_every_catalogue_gpu_has_a_family_in_the_table():
    assert "unknown" not in set(_catalogue_platforms().values())


def test_every_stack_is_in_the_table_and_every_entry_is_sourced():
    assert set(STACKS) <= set(TABLE)
    for row in table_rows():
        assert row["sources"], row
        assert all(s["url"].startswith("https://") and s["quote"] for s in row["sources"]), row
        assert row["read_on"] == READ_ON
        if row["support"] == Support.PARTIAL:
            assert row["note"], row  # a partial entry says what is missing


def test_the_compute_capability_floors_are_the_projects_own():
    assert support("vllm", "nvidia-volta").support != Support.RUNS  # 7.5 and up
    assert support("vllm", "nvidia-turing").runs
    assert not support("tensorrt_llm", "nvidia-turing").runs  # lowest listed: SM80
    assert not support("flash_attention", "nvidia-turing").runs
    assert support("unsloth", "nvidia-volta").runs  # 7.0


def _answer(api, **body) -> dict:
    response = api.post(URL, {**EVERY, **body}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


# (stack, a workload it runs, a GPU it does not run on, the words of the reason)
NOT_RUN = [
    ("vllm", {"task": "inference"}, "TPUv6e", "vLLM does not run on"),
    ("sglang", {"task": "inference"}, "Gaudi3", "SGLang does not run on"),
    ("tensorrt_llm", {"task": "inference"}, "MI300X", "TensorRT-LLM does not run on"),
    ("tensorrt_llm", {"task": "inference"}, "T4", "TensorRT-LLM does not run on"),
    ("hf_peft", {"task": "lora"}, "TPUv6e", "Hugging Face Transformers + PEFT does not run on"),
    ("torchtune", {"task": "lora"}, "Gaudi3", "torchtune does not run on"),
    ("unsloth", {"task": "lora"}, "MI210", "Unsloth does not run on"),
    ("fsdp2", {"task": "pretrain"}, "TPUv5p", "PyTorch FSDP2 does not run on"),
    ("deepspeed_zero", {"task": "pretrain"}, "TPUv5p", "DeepSpeed ZeRO does not run on"),
    ("megatron", {"task": "pretrain"}, "MI300X", "Megatron-LM does not run on"),
]


@pytest.mark.parametrize(
    ("stack", "body", "gpu", "words"), NOT_RUN, ids=[r[0] + "-" + r[2] for r in NOT_RUN]
)
def test_a_part_the_stack_does_not_run_is_rejected_with_the_reason(
    api, catalog, stack, body, gpu, words
):
    answer = _answer(api, model="llama-3.2-3b", stack=stack, **body)
    on_gpu = [c for c in answer["candidates"] if c["gpu"] == gpu]
    assert on_gpu
    for candidate in on_gpu:
        assert not candidate["fits"] and candidate["rejection"] == "stack"
        assert candidate["reason"].startswith(words)
    assert any(row["rejection"] == "stack" for row in answer["rejected_summary"])


def test_tensorrt_llm_never_fits_off_nvidia(api, catalog):
    platforms = _catalogue_platforms()
    answer = _answer(api, model="llama-3.1-8b", stack="tensorrt_llm")
    assert {platforms[c["gpu"]].split("-")[0] for c in answer["candidates"] if c["fits"]} == {
        "nvidia"
    }


@pytest.mark.parametrize("stack", ["hf_peft", "unsloth"])
def test_qlora_under_a_bitsandbytes_stack_never_lands_on_tpu_neuron_or_gaudi(api, catalog, stack):
    platforms = _catalogue_platforms()
    answer = _answer(api, model="llama-3.1-8b", task="qlora", stack=stack, zero_stage=3)
    landed = {platforms[c["gpu"]] for c in answer["candidates"] if c["fits"]}
    assert landed and not any(p.startswith(NOT_FOR_BITSANDBYTES) for p in landed)
    # Where another stack fine-tunes there, it is listed apart, and says why it does not take
    # this QLoRA: bitsandbytes' 4-bit base does not come along.
    tpu = [o for o in answer["with_other_stacks"] if o["gpu"] == "TPUv6e"]
    assert tpu and tpu[0]["lacks"] == ["bitsandbytes_4bit"] and tpu[0]["best"] is None


def test_another_stack_is_listed_apart_with_what_the_move_costs(api, catalog):
    answer = _answer(api, model="llama-3.1-8b", stack="vllm")
    tpu = next(o for o in answer["with_other_stacks"] if o["gpu"] == "TPUv6e")
    assert tpu["stack"] == "vLLM with its TPU plugin (tpu-inference)" and tpu["move"] == "re-tune"
    assert tpu["best"] and tpu["best"]["gpu_count"] >= 1 and tpu["sources"]
    assert not any(c["gpu"] == "TPUv6e" and c["fits"] for c in answer["candidates"])


def test_other_stacks_true_ranks_them_beside_the_stacks_own(api, catalog):
    answer = _answer(api, model="llama-3.1-8b", stack="vllm", other_stacks=True)
    tpu = [c for c in answer["candidates"] if c["gpu"] == "TPUv6e" and c["fits"]]
    assert tpu and tpu[0]["with_other_stack"]["stack"].startswith("vLLM with its TPU plugin")
    plain = [c for c in answer["candidates"] if c["gpu"] == "H100-SXM" and c["fits"]]
    assert plain and plain[0]["with_other_stack"] is None


def test_a_move_to_jax_is_a_rewrite_and_moves_are_sourced():
    maxtext = next(m for m in MOVES if m.stack.startswith("MaxText"))
    assert maxtext.move == REWRITE
    for move in MOVES:
        assert move.sources and move.sized_as in STACKS
        assert move.platforms <= set(PLATFORM_NAMES)


def test_flash_attention_where_it_does_not_run_is_a_warning_not_a_rejection(api, catalog):
    answer = _answer(api, model="llama-3.2-3b", task="lora", weight_dtype="fp16")
    t4 = next(c for c in answer["candidates"] if c["gpu"] == "T4" and c["fits"])
    assert any("FlashAttention-2 does not run on T4" in w for w in t4["warnings"])
