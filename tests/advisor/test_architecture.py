"""Parameter counts and KV bytes per token, against counts made outside this code."""

import json

import pytest

from advisor.domain.sizing.architecture import (
    UnsupportedArchitecture,
    architecture_from_config,
    architecture_from_params,
)
from advisor.domain.sizing.bundled_models import MODELS_DIR, bundled_models
from tests.advisor.reference import REFERENCE

META_DEVICE_COUNTS = {entry["model"]: entry for entry in REFERENCE["models"]}


@pytest.mark.parametrize("slug", sorted(META_DEVICE_COUNTS))
def test_parameter_counts_equal_the_meta_device_counts_exactly(slug):
    expected = META_DEVICE_COUNTS[slug]
    arch = architecture_from_config(json.loads((MODELS_DIR / f"{slug}.json").read_text()))
    assert arch.params_total == expected["params_exact"]
    assert arch.params_active == expected["params_active_per_token"]
    assert arch.largest_layer_params == expected["largest_layer_params"]


@pytest.mark.parametrize("slug", sorted(META_DEVICE_COUNTS))
def test_kv_bytes_per_token_at_16_bit_equal_the_reference(slug):
    expected = META_DEVICE_COUNTS[slug]["kv_bytes_per_token_fp16"]
    arch = architecture_from_config(json.loads((MODELS_DIR / f"{slug}.json").read_text()))
    assert (arch.kv_bytes_per_token(2) if arch.has_kv_cache else None) == expected


# Totals published with the models or used in the reference's calibration rows.
PUBLISHED_TOTALS = {
    "llama-2-13b": 13_015_864_320,  # Llama 2 paper GPU-hours row (sizing_reference)
    "llama-2-70b": 68_976_648_192,
    "llama-3.1-70b": 70_553_706_496,
    "bert-large-uncased": 335_141_888,  # Hugging Face memory-anatomy check
    "falcon-7b": 6_921_720_704,
    "gpt2-medium": 354_823_168,
    "gpt2-xl": 1_557_611_200,
    "t5-large": 737_668_096,
}


@pytest.mark.parametrize(("slug", "params"), sorted(PUBLISHED_TOTALS.items()))
def test_bundled_models_match_their_published_parameter_totals(slug, params):
    assert bundled_models()[slug].architecture().params_total == params


@pytest.mark.parametrize(
    ("slug", "billions_total", "billions_active"),
    [
        ("llama-3.1-405b", 405.9, 405.9),
        ("mixtral-8x22b-v0.1", 140.6, 39.2),  # "141B total, 39B active"
        ("deepseek-v2", 235.7, 21.4),  # "236B total, 21B activated"
        ("qwen2.5-72b", 72.7, 72.7),
        ("gemma-2-27b", 27.2, 27.2),
        ("gemma-2-9b", 9.2, 9.2),
        ("falcon-40b", 41.3, 41.3),
    ],
)
def test_large_models_match_their_announced_sizes(slug, billions_total, billions_active):
    arch = bundled_models()[slug].architecture()
    assert round(arch.params_total / 1e9, 1) == billions_total
    assert round(arch.params_active / 1e9, 1) == billions_active


def test_every_bundled_model_has_a_source_and_counts():
    for model in bundled_models().values():
        assert model.source_url.startswith("https://huggingface.co/")
        assert model.architecture().params_total > 0


def test_sliding_window_caps_the_kv_cache_of_windowed_layers():
    mistral = bundled_models()["mistral-7b-v0.1"].architecture()  # window 4096, all layers
    per_token = mistral.kv_bytes_per_token(2)
    assert mistral.kv_cache_bytes(2048, 1, 2) == 2048 * per_token
    assert mistral.kv_cache_bytes(32_768, 1, 2) == 4096 * per_token
    gemma2 = bundled_models()["gemma-2-9b"].architecture()  # every other layer windowed
    full = gemma2.kv_cache_bytes(8192, 1, 2)
    assert full == pytest.approx(gemma2.kv_bytes_per_token(2) * (8192 + 4096) / 2)


def test_qwen2_sliding_window_is_ignored_when_use_sliding_window_is_false():
    qwen = bundled_models()["qwen2.5-7b"].architecture()
    assert qwen.sliding_window is None
    assert qwen.kv_cache_bytes(100_000, 1, 2) == 100_000 * 57_344


def test_mla_cache_is_the_latent_not_per_head_keys_and_values():
    lite = bundled_models()["deepseek-v2-lite"].architecture()
    # A naive per-head cache would be 2 x 27 layers x 16 heads x (192 + 128)/2 ... = 276,480 B.
    assert lite.kv_bytes_per_token(2) == 31_104
    assert lite.num_kv_heads == 1  # tensor parallelism does not split the latent


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"model_type": "mamba", "hidden_size": 1}, "model_type='mamba'"),
        ({"model_type": "llama"}, "hidden_size"),
        ({"model_type": "llama", "hidden_size": -4, "num_hidden_layers": 2}, "hidden_size"),
        (
            {**json.loads((MODELS_DIR / "t5-base.json").read_text()), "feed_forward_proj": "swish"},
            "feed_forward_proj",
        ),
        (
            {**json.loads((MODELS_DIR / "deepseek-v2-lite.json").read_text()), "moe_layer_freq": 2},
            "moe_layer_freq",
        ),
        (
            {
                **json.loads((MODELS_DIR / "llama-2-7b.json").read_text()),
                "quantization_config": {"bits": 4},
            },
            "quantization_config",
        ),
    ],
)
def test_unsupported_architectures_are_refused_naming_the_field(config, field):
    with pytest.raises(UnsupportedArchitecture, match=field.replace("(", r"\(")):
        architecture_from_config(config)


def test_a_bare_parameter_count_states_the_shape_it_assumed():
    arch = architecture_from_params(7_000_000_000)
    assert arch.params_total == 7_000_000_000
    assert any("assumed" in note for note in arch.notes)
    given = architecture_from_params(7_000_000_000, num_layers=32, hidden_size=4096, num_kv_heads=8)
    assert given.kv_bytes_per_token(2) == 2 * 32 * 8 * 128 * 2
