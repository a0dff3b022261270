"""Quantised checkpoints (quantization_config): weights at the precision their files store.

Before this, any config with a quantization_config was refused ("give the unquantised config")
and gpt-oss could only be sized from a 16-bit guess. Each stored-bytes figure is compared with
the size its publisher states; every reference says where it was read.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from advisor.domain.sizing.architecture import (
    ModelArchitecture,
    UnsupportedArchitecture,
    architecture_from_config,
)
from advisor.domain.sizing.architecture.quantization import MXFP4_BITS
from advisor.domain.sizing.assumptions import assumptions
from advisor.domain.sizing.layout import Parallelism
from advisor.domain.sizing.memory import memory_per_gpu
from advisor.domain.sizing.precision import Dtype
from advisor.domain.sizing.remedies import _remedy_variants
from advisor.domain.sizing.speed.inference import _weight_bytes_read
from advisor.domain.sizing.workload import Task, Workload
from tests.helpers import bundled_config as bundled

URL = "/api/v1/advice/sizing"


# The quantization_config of openai/gpt-oss-20b and -120b as published
# (https://huggingface.co/openai/gpt-oss-20b/blob/main/config.json and .../gpt-oss-120b/...),
# read where a public document quotes both blocks (find_string '"quant_method": "mxfp4"').
GPT_OSS_MXFP4 = {
    "modules_to_not_convert": [
        "model.layers.*.self_attn",
        "model.layers.*.mlp.router",
        "model.embed_tokens",
        "lm_head",
    ],
    "quant_method": "mxfp4",
}
GPT_OSS_20B = {**bundled("gpt-oss-20b"), "quantization_config": GPT_OSS_MXFP4}
# The bundled configs carry these blocks, as the Hub's do.
GPT_OSS_120B = bundled("gpt-oss-120b")
# DeepSeek-V3's own config.json (https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/
# config.json): the fields sizing reads, its fp8 quantization_config as published, and its
# one multi-token-prediction layer, which the checkpoint stores after the 61 served layers.
DEEPSEEK_V3_FP8 = {
    "architectures": ["DeepseekV3ForCausalLM"],
    "model_type": "deepseek_v3",
    "hidden_size": 7168,
    "intermediate_size": 18432,
    "moe_intermediate_size": 2048,
    "num_hidden_layers": 61,
    "num_attention_heads": 128,
    "num_key_value_heads": 128,
    "n_shared_experts": 1,
    "n_routed_experts": 256,
    "num_experts_per_tok": 8,
    "first_k_dense_replace": 3,
    "moe_layer_freq": 1,
    "kv_lora_rank": 512,
    "q_lora_rank": 1536,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "vocab_size": 129280,
    "max_position_embeddings": 163840,
    "tie_word_embeddings": False,
    "topk_method": "noaux_tc",
    "n_group": 8,
    "topk_group": 4,
    "num_nextn_predict_layers": 1,
    "torch_dtype": "bfloat16",
    "quantization_config": {
        "activation_scheme": "dynamic",
        "fmt": "e4m3",
        "quant_method": "fp8",
        "weight_block_size": [128, 128],
    },
}
# AutoGPTQ's and AutoAWQ's quantize_config as TheBloke's Llama-2 7B repositories carry them.
GPTQ_4BIT = {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": True}
AWQ_4BIT = {
    "quant_method": "awq",
    "bits": 4,
    "group_size": 128,
    "zero_point": True,
    "version": "gemm",
}


def quantised(config: dict, quantization: dict) -> ModelArchitecture:
    return architecture_from_config({**config, "quantization_config": quantization})


def within(value: float, reference: float, fraction: float) -> bool:
    return abs(value - reference) <= fraction * reference


# (config, published bytes, tolerance, where the published figure was read)
CHECKPOINTS = {
    "gpt-oss-20b": (
        GPT_OSS_20B,
        13_761_264_768,
        0.01,
        "openai/gpt-oss-20b model.safetensors.index.json metadata.total_size, quoted in a "
        "public discussion of the checkpoint (find_string '\"total_size\": 13761264768')",
    ),
    "gpt-oss-120b": (
        GPT_OSS_120B,
        65_248_815_744,
        0.01,
        "openai/gpt-oss-120b tensor bytes (model.safetensors.index.json total_size) asserted "
        "in a public repository's inventory test (find_string '65248815744')",
    ),
    "llama-2-7b-gptq-4bit-128g": (
        {**bundled("llama-2-7b"), "quantization_config": GPTQ_4BIT},
        3.90e9,
        0.02,
        "TheBloke/Llama-2-7b-Chat-GPTQ README, Provided files: gptq-4bit-128g-actorder_True "
        "and main, 3.90 GB (the Llama-2 7B architecture; find_string '| 4096 | 3.90 GB')",
    ),
    "llama-2-7b-gptq-4bit-64g": (
        {**bundled("llama-2-7b"), "quantization_config": {**GPTQ_4BIT, "group_size": 64}},
        4.02e9,
        0.02,
        "TheBloke/Llama-2-7b-Chat-GPTQ README: gptq-4bit-64g-actorder_True, 4.02 GB",
    ),
    "llama-2-7b-gptq-4bit-32g": (
        {**bundled("llama-2-7b"), "quantization_config": {**GPTQ_4BIT, "group_size": 32}},
        4.28e9,
        0.02,
        "TheBloke/Llama-2-7b-Chat-GPTQ README: gptq-4bit-32g-actorder_True, 4.28 GB",
    ),
    "llama-2-7b-awq-4bit-128g": (
        {**bundled("llama-2-7b"), "quantization_config": AWQ_4BIT},
        3.89e9,
        0.02,
        "TheBloke/meditron-7B-AWQ README, Provided files: main, 4-bit, GS 128, 3.89 GB "
        "(meditron-7B is the Llama-2 7B architecture; find_string '| 4096 | 3.89 GB')",
    ),
}


@pytest.mark.parametrize("name", sorted(CHECKPOINTS))
def test_stored_weight_bytes_match_the_published_checkpoint_size(name):
    config, published, tolerance, _source = CHECKPOINTS[name]
    stored = architecture_from_config(config).stored_weights
    assert within(stored.checkpoint_bytes, published, tolerance), (
        f"{name}: {stored.checkpoint_bytes:,.0f} bytes vs published {published:,.0f}"
    )


def test_every_checkpoint_reference_says_where_it_was_read():
    assert all(source for *_, source in CHECKPOINTS.values())


def test_gpt_oss_stores_mxfp4_experts_and_bf16_everything_else_to_the_byte():
    """4.25 bits per expert weight (4-bit values + an 8-bit scale per 32), 2 bytes for the
    rest: the published total_size exactly, for both sizes."""
    for config, published in ((GPT_OSS_20B, 13_761_264_768), (GPT_OSS_120B, 65_248_815_744)):
        arch = architecture_from_config(config)
        experts, rest = arch.stored_weights.parts
        assert experts.bits_per_param == MXFP4_BITS == 4.25
        assert rest.bits_per_param == 16
        assert experts.params + rest.params == arch.params_total
        assert arch.stored_weights.weight_bytes == published
    summary = architecture_from_config(GPT_OSS_20B).stored_weights.summary
    assert summary == (
        "weights as stored: MXFP4 experts, bf16 attention and embeddings (from quantization_config)"
    )


def test_gpt_oss_120b_parameter_count_is_the_published_one():
    """116,829,156,672: the model card's 116.8B, as transformers counts the checkpoint."""
    assert architecture_from_config(GPT_OSS_120B).params_total == 116_829_156_672


DEEPSEEK_V3_CHECKPOINT_BYTES = 688_586_727_753  # metadata.total_size of its index json, as
# a public model-facts repository records it (artifact_bytes, creator_repository_weight_files_
# only; find_string '688586727753'); DeepSeek's README: 685B = 671B main + 14B MTP module.


def test_deepseek_v3_fp8_checkpoint_matches_its_total_size_and_serves_without_the_mtp_layer():
    stored = architecture_from_config(DEEPSEEK_V3_FP8).stored_weights
    assert stored.method == "fp8"
    assert within(stored.checkpoint_bytes, DEEPSEEK_V3_CHECKPOINT_BYTES, 0.01)
    # Serving loads the 61 layers: the MTP module (a MoE layer, ~11.5B parameters at 1 byte,
    # and its 16-bit embedding and head copies) stays on disk.
    assert 14e9 < stored.checkpoint_extra_bytes < 17e9
    assert stored.weight_bytes == stored.checkpoint_bytes - stored.checkpoint_extra_bytes
    linear = stored.parts[0]
    assert linear.bits_per_param == 8 + 32 / (128 * 128)


@pytest.mark.parametrize(
    ("quantization", "bits_per_weight"),
    [
        (GPTQ_4BIT, 4 + (16 + 4) / 128 + 32 / 4096),
        ({**GPTQ_4BIT, "group_size": -1}, 4 + (16 + 4) / 4096 + 32 / 4096),
        (AWQ_4BIT, 4 + (16 + 4) / 128),
        ({"quant_method": "awq", "w_bit": 4, "q_group_size": 64, "zero_point": False}, 4.25),
        ({"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4"}, 4.5),
        (
            {
                "quant_method": "bitsandbytes",
                "load_in_4bit": True,
                "bnb_4bit_quant_type": "nf4",
                "bnb_4bit_use_double_quant": True,
            },
            4 + 8 / 64 + 32 / (64 * 256),
        ),
        ({"quant_method": "bitsandbytes", "load_in_8bit": True}, 8 + 32 / 4096),
        ({"quant_method": "fp8", "activation_scheme": "dynamic"}, 8),
        ({"quant_method": "fp8", "weight_block_size": [128, 128]}, 8 + 32 / 16384),
        (
            {
                "quant_method": "compressed-tensors",
                "config_groups": {
                    "group_0": {
                        "targets": ["Linear"],
                        "weights": {
                            "num_bits": 4,
                            "type": "int",
                            "symmetric": True,
                            "strategy": "group",
                            "group_size": 128,
                        },
                    }
                },
                "ignore": ["lm_head"],
            },
            4 + 16 / 128,
        ),
        (
            {
                "quant_method": "compressed-tensors",
                "config_groups": {
                    "group_0": {
                        "targets": ["Linear"],
                        "weights": {"num_bits": 8, "type": "float", "strategy": "channel"},
                    }
                },
                "ignore": ["lm_head"],
            },
            8 + 16 / 4096,
        ),
    ],
)
def test_each_format_stores_its_stated_bits_and_constants_with_16_bit_embeddings(
    quantization, bits_per_weight
):
    arch = quantised(bundled("llama-2-7b"), quantization)
    linear, embeddings = arch.stored_weights.parts
    assert linear.bits_per_param == pytest.approx(bits_per_weight)
    assert linear.params == arch.params_total - arch.params_embedding
    assert (embeddings.params, embeddings.bits_per_param) == (arch.params_embedding, 16)


def test_attention_named_in_modules_to_not_convert_stays_16_bit():
    arch = quantised(
        bundled("llama-2-7b"), {**AWQ_4BIT, "modules_to_not_convert": ["model.layers.*.self_attn"]}
    )
    _, attention, _ = arch.stored_weights.parts
    assert attention.params == 32 * 4 * 4096 * 4096
    assert attention.bits_per_param == 16
    assert "fp16 attention, embeddings and output head" in arch.stored_weights.summary


@pytest.mark.parametrize(
    ("quantization", "field"),
    [
        ([4], "quantization_config must be a JSON object"),
        ({"bits": 4}, "quantization_config.quant_method"),
        ({"quant_method": "hqq"}, "quantization_config.quant_method='hqq'"),
        ({**GPTQ_4BIT, "bits": "4"}, "quantization_config.bits"),
        ({**GPTQ_4BIT, "bits": 4.0}, "quantization_config.bits"),
        ({**GPTQ_4BIT, "bits": 64}, "quantization_config.bits"),
        ({**GPTQ_4BIT, "group_size": 0}, "quantization_config.group_size"),
        ({**GPTQ_4BIT, "desc_act": "yes"}, "quantization_config.desc_act"),
        ({"quant_method": "gptq", "group_size": 128}, "quantization_config.bits"),
        ({**AWQ_4BIT, "modules_to_not_convert": "lm_head"}, "modules_to_not_convert"),
        ({**AWQ_4BIT, "modules_to_not_convert": ["mystery"]}, "'mystery'"),
        ({"quant_method": "bitsandbytes"}, "load_in_4bit"),
        (
            {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "q4"},
            "bnb_4bit_quant_type",
        ),
        ({"quant_method": "fp8", "weight_block_size": [128]}, "weight_block_size"),
        ({"quant_method": "fp8", "weight_block_size": [128, "128"]}, "weight_block_size"),
        ({"quant_method": "fp8", "activation_scheme": 1}, "activation_scheme"),
        ({"quant_method": "compressed-tensors", "config_groups": {}}, "config_groups"),
        (
            {
                "quant_method": "compressed-tensors",
                "config_groups": {"g": {"weights": {"num_bits": 4, "strategy": "spiral"}}},
            },
            "weights.strategy",
        ),
        (GPT_OSS_MXFP4, "mxfp4"),  # a dense model has no experts to store in MXFP4
    ],
)
def test_a_quantization_config_we_cannot_read_is_refused_naming_the_field(quantization, field):
    with pytest.raises(UnsupportedArchitecture, match=field.replace("(", r"\(")):
        quantised(bundled("llama-2-7b"), quantization)


quantization_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.floats() | st.text(max_size=6),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=6,
)
quantization_fields = st.sampled_from(
    [
        "bits",
        "w_bit",
        "group_size",
        "q_group_size",
        "desc_act",
        "zero_point",
        "modules_to_not_convert",
        "load_in_4bit",
        "load_in_8bit",
        "bnb_4bit_quant_type",
        "bnb_4bit_use_double_quant",
        "llm_int8_skip_modules",
        "weight_block_size",
        "activation_scheme",
        "config_groups",
        "ignore",
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    method=st.sampled_from(["gptq", "awq", "bitsandbytes", "fp8", "mxfp4", "compressed-tensors"]),
    changes=st.dictionaries(quantization_fields, quantization_values, max_size=4),
    base=st.sampled_from(["llama-2-7b", "mixtral-8x7b-v0.1", "gpt-oss-20b"]),
)
def test_any_json_in_a_quantization_field_is_stored_bytes_or_a_refusal(method, changes, base):
    try:
        arch = quantised(bundled(base), {"quant_method": method, **changes})
    except UnsupportedArchitecture as refusal:
        assert str(refusal) and len(str(refusal)) < 400
        return
    stored = arch.stored_weights
    assert sum(part.params for part in stored.parts) == arch.params_total
    assert 0 < stored.weight_bytes <= arch.params_total * 4


def inference(arch: ModelArchitecture, **changes) -> Workload:
    return Workload(architecture=arch, task=Task.INFERENCE, **changes)


def test_inference_weights_are_the_stored_bytes_by_default_and_the_answer_says_so():
    arch = architecture_from_config(GPT_OSS_20B)
    workload = inference(arch)
    memory = memory_per_gpu(workload, Parallelism(1))
    assert memory.weights == 13_761_264_768
    said = assumptions(workload)
    assert any(
        line.startswith(
            "weights as stored: MXFP4 experts, bf16 attention and embeddings "
            "(from quantization_config)"
        )
        for line in said
    )
    assert memory_per_gpu(inference(arch), Parallelism(2, tensor_parallel=2)).weights == (
        13_761_264_768 / 2
    )


def test_an_explicit_weight_dtype_overrides_the_stored_precision_with_a_note():
    arch = architecture_from_config(GPT_OSS_20B)
    chosen = inference(arch, weight_dtype=Dtype.BF16, weights_as_stored=False)
    assert memory_per_gpu(chosen, Parallelism(1)).weights == arch.params_total * 2
    said = assumptions(chosen)
    assert any("overrides the checkpoint's stored precision" in line for line in said)
    changed = inference(arch).with_changes(weight_dtype=Dtype.FP8)
    assert changed.stored_weights is None
    assert memory_per_gpu(changed, Parallelism(1)).weights < arch.params_total * 2


def test_an_unquantised_checkpoint_is_sized_from_weight_dtype_as_before():
    unquantised = {k: v for k, v in GPT_OSS_20B.items() if k != "quantization_config"}
    arch = architecture_from_config(unquantised)
    assert arch.stored_weights is None
    assert memory_per_gpu(inference(arch), Parallelism(1)).weights == arch.params_total * 2


def test_a_checkpoint_served_as_stored_is_not_offered_a_requantisation_remedy():
    stored = inference(architecture_from_config(GPT_OSS_20B))
    assert not {"fp8 weights", "int4 weights"} & {name for name, *_ in _remedy_variants(stored)}


def test_training_ignores_the_stored_precision():
    arch = architecture_from_config(GPT_OSS_20B)
    assert Workload(architecture=arch, task=Task.LORA).stored_weights is None


def test_the_api_sizes_an_uploaded_quantised_config_as_stored(api):
    response = api.post(URL, {"config": GPT_OSS_20B}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["workload"]["weights_as_stored"] is True
    stored = body["model"]["stored_weights"]
    assert stored["method"] == "mxfp4"
    assert stored["weight_bytes"] == 13_761_264_768
    assert [part["bits_per_param"] for part in stored["parts"]] == [4.25, 16]
    tensor_parallel = body["recommendation"]["tensor_parallel"]
    # As stored, plus what vLLM pads the MXFP4 experts to on that GPU (kernel_padding.py).
    stored_per_gpu = 13_761_264_768 / tensor_parallel
    assert stored_per_gpu <= body["memory"]["weights"] <= stored_per_gpu * 1.14
    assert any(line.startswith("weights as stored: MXFP4 experts") for line in body["assumptions"])


def test_the_bundled_gpt_oss_models_are_sized_as_their_checkpoints_store_them(api):
    assert bundled("gpt-oss-20b")["quantization_config"] == GPT_OSS_MXFP4
    body = api.post(URL, {"model": "gpt-oss-120b"}, format="json").json()
    assert body["model"]["stored_weights"]["weight_bytes"] == 65_248_815_744
    assert body["workload"]["weights_as_stored"] is True


def test_the_api_honours_an_explicit_weight_dtype_over_the_stored_one(api):
    body = api.post(URL, {"config": GPT_OSS_20B, "weight_dtype": "bf16"}, format="json").json()
    assert body["workload"]["weights_as_stored"] is False
    tensor_parallel = body["recommendation"]["tensor_parallel"]
    assert body["memory"]["weights"] == round(body["model"]["params_total"] * 2 / tensor_parallel)
    said = body["assumptions"]
    assert any("overrides the checkpoint's stored precision" in line for line in said)


def test_a_decode_step_reads_the_experts_at_their_stored_width():
    """Before, the bytes read were the stored total times the parameter share read: for
    gpt-oss at batch 1 that undercounts the bf16 attention and embeddings (a fifth of the
    parameters but over a quarter of the bytes)."""
    arch = architecture_from_config(GPT_OSS_20B)
    stored = arch.stored_weights
    experts, rest = stored.parts
    idle = (1 - 4 / 32) ** 1
    # rest holds the expert biases too: they are routed-expert bytes, read with their expert
    biases = 24 * 32 * 8640
    outside_experts = rest.bytes - biases * 2
    expected = outside_experts + stored.routed_expert_bytes * (1 - idle)
    assert _weight_bytes_read(inference(arch, batch_size=1)) == pytest.approx(expected)
    assert stored.routed_expert_bytes == pytest.approx(experts.bytes + biases * 2)
