"""gpt-oss, DeepSeek-V3 (router bias), GLM-4.5 (glm4_moe), OLMo 2, Granite, Granite-MoE,
Cohere-2 and Mistral Small 3.x (mistral3): counts equal the meta-device references exactly.

Before these readers, every one of these model_types was refused as unsupported (and
DeepSeek-V3 without topk_method left out its router's e_score_correction_bias). The references
(tests/fixtures/model_references.json) come from tests/fixtures/meta_device_counts.py, which
instantiates each config with transformers on PyTorch's meta device; its docstring gives the
conventions (tied embeddings once, router bias counted, sliding-window layers in full)."""

import json
from pathlib import Path

import pytest

from advisor.domain.sizing.architecture import UnsupportedArchitecture, architecture_from_config
from advisor.domain.sizing.bundled_models import MODELS_DIR, bundled_models

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
REFERENCES = json.loads((FIXTURES / "model_references.json").read_text())
TINY = json.loads((FIXTURES / "tiny_family_configs.json").read_text())
BUNDLED = (
    *("gpt-oss-20b", "phi-4", "glm-4.5-air", "mistral-small-3.2-24b"),
    *(
        "deepseek-v3",
        "deepseek-r1",
        "kimi-k2-instruct",
        "olmo-2-7b",
        "granite-3.3-8b",
        "gpt-oss-120b",
    ),
)


def config_of(slug: str) -> dict:
    if slug in TINY:
        return TINY[slug]
    return json.loads((MODELS_DIR / f"{slug}.json").read_text())


@pytest.mark.parametrize("slug", [*BUNDLED, *sorted(TINY)])
def test_counts_equal_the_meta_device_reference_exactly(slug):
    expected = REFERENCES[slug]
    arch = architecture_from_config(config_of(slug))
    assert arch.params_total == expected["total_params"]
    assert arch.params_active == expected["active_params"]
    assert arch.kv_bytes_per_token(2) == expected["kv_bytes_per_token_bf16"]


def test_every_reference_records_how_it_was_counted():
    for entry in REFERENCES.values():
        assert entry["transformers_version"] and entry["torch_version"] and entry["how"]


def test_bundled_models_are_listed_with_their_source():
    models = bundled_models()
    for slug in BUNDLED:
        assert models[slug].source_url.startswith("https://huggingface.co/")


@pytest.mark.parametrize(
    ("slug", "billions_total"),
    [
        ("gpt-oss-20b", 20.9),
        ("gpt-oss-120b", 116.8),
        ("phi-4", 14.7),
        ("glm-4.5-air", 106.9),
        ("deepseek-v3", 671.0),
        ("deepseek-r1", 671.0),
        ("olmo-2-7b", 7.3),
    ],
)
def test_totals_match_the_model_cards(slug, billions_total):
    # gpt-oss card: 20.9B total; Phi-4: 14.7B; GLM-4.5-Air: "106B total"; DeepSeek-V3/R1: 671B.
    assert round(architecture_from_config(config_of(slug)).params_total / 1e9, 1) == billions_total


def test_gpt_oss_alternates_sliding_window_and_global_layers():
    arch = architecture_from_config(config_of("gpt-oss-20b"))
    assert (arch.sliding_window, arch.sliding_window_layers, arch.num_layers) == (128, 12, 24)
    per_layer = arch.kv_bytes_per_token(2) / 24
    # 4096 tokens: the 12 global layers keep them all, the 12 windowed layers keep 128.
    assert arch.kv_cache_bytes(4096, 1, 2) == per_layer * (12 * 4096 + 12 * 128)


def test_gpt_oss_without_layer_types_windows_every_other_layer_from_the_first():
    config = {k: v for k, v in TINY["tiny-gpt-oss"].items() if k != "layer_types"}
    assert architecture_from_config(config).sliding_window_layers == 2  # of 3


def test_gpt_oss_layer_types_of_the_wrong_length_are_refused_by_name():
    config = {**TINY["tiny-gpt-oss"], "layer_types": ["full_attention"]}
    with pytest.raises(UnsupportedArchitecture, match="layer_types"):
        architecture_from_config(config)


def test_cohere2_windows_three_layers_in_four_and_ties_its_embeddings():
    arch = architecture_from_config(TINY["tiny-cohere2"])
    assert (arch.sliding_window, arch.sliding_window_layers) == (32, 6)  # of 8
    assert arch.params_embedding == 300 * 64  # tied by default: counted once


def test_deepseek_v3_counts_the_router_bias_without_topk_method():
    config = {k: v for k, v in TINY["tiny-deepseek-v3"].items() if k != "topk_method"}
    assert (
        architecture_from_config(config).params_total
        == REFERENCES["tiny-deepseek-v3"]["total_params"]
    )


def test_mistral3_sizes_the_text_model_and_says_the_vision_tower_is_left_out():
    arch = architecture_from_config(config_of("mistral-small-3.2-24b"))
    assert arch.family == "mistral3"
    assert any("vision tower" in note for note in arch.notes)


def test_mistral3_without_a_text_config_is_refused_by_name():
    with pytest.raises(UnsupportedArchitecture, match="text_config"):
        architecture_from_config({"model_type": "mistral3"})


def test_glm4_moe_dense_layers_beyond_the_model_are_refused():
    config = {**TINY["tiny-glm4-moe"], "first_k_dense_replace": 4}
    with pytest.raises(UnsupportedArchitecture, match="first_k_dense_replace"):
        architecture_from_config(config)


def test_granitemoe_uses_a_share_of_its_experts_per_token():
    arch = architecture_from_config(TINY["tiny-granitemoe"])
    assert arch.routed_fraction_per_token == 2 / 6


# gpt-oss is published with quantization_config (MXFP4 experts); today's registry refuses any
# quantised config (helper I14-C accepts them and counts the MXFP4 bytes).
GPT_OSS_QUANTIZATION = {
    "modules_to_not_convert": [
        "model.layers.*.self_attn",
        "model.layers.*.mlp.router",
        "model.embed_tokens",
        "lm_head",
    ],
    "quant_method": "mxfp4",
}


def test_gpt_oss_as_published_with_its_mxfp4_quantization_config_is_counted():
    config = {**config_of("gpt-oss-20b"), "quantization_config": GPT_OSS_QUANTIZATION}
    assert (
        architecture_from_config(config).params_total == REFERENCES["gpt-oss-20b"]["total_params"]
    )


def test_kimi_k2_equals_its_checkpoint_tensor_list_less_the_fp8_scales():
    """The published Kimi-K2-Instruct tensor list holds 1,026,470,731,056 elements: the weights
    (router e_score_correction_bias included) plus float32 block scales of the fp8 matrices and
    each layer's rotary inv_freq. Without those, it is exactly our count."""
    layers, moe_layers, experts = 61, 60, 384
    scales = layers * (5 * 56 + 128 * 4 + 56 * 64 + 12 * 56 + 96 * 12)  # attention projections
    scales += 3 * 144 * 56  # layer 0's dense MLP
    scales += moe_layers * (experts + 1) * 3 * 56 * 16  # routed and shared experts
    inv_freq = layers * 56
    stored = 1_026_470_731_056
    arch = architecture_from_config(config_of("kimi-k2-instruct"))
    assert arch.params_total == stored - scales - inv_freq


def test_granite_3_3_8b_equals_its_published_safetensors_count():
    assert architecture_from_config(config_of("granite-3.3-8b")).params_total == 8_170_864_640
