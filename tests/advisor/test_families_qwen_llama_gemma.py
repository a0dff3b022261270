"""Qwen3, Qwen3-MoE, Qwen2-MoE, Llama 4 and Gemma 3: counts equal the meta-device references,
and each family's traits hold on small hand-made configs.

The references (tests/fixtures/model_references.json) were made by
tests/fixtures/meta_device_counts.py (transformers 5.24.0, torch 2.13.0, on the meta device);
before these readers, every model_type here was refused as unsupported."""

import json
from pathlib import Path

import pytest

from advisor.domain.sizing.architecture import UnsupportedArchitecture, architecture_from_config
from advisor.domain.sizing.bundled_models import bundled_models
from tests.helpers import bundled_config

REFERENCES = json.loads(
    (Path(__file__).resolve().parents[1] / "fixtures" / "model_references.json").read_text()
)
SLUGS = (
    "qwen3-0.6b",
    "qwen3-4b",
    "qwen3-8b",
    "qwen3-14b",
    "qwen3-32b",
    "qwen3-30b-a3b",
    "qwen3-235b-a22b",
    "qwen1.5-moe-a2.7b",
    "llama-4-scout-17b-16e",
    "llama-4-maverick-17b-128e",
    "gemma-3-1b",
    "gemma-3-4b",
    "gemma-3-12b",
    "gemma-3-27b",
)


@pytest.mark.parametrize("slug", SLUGS)
def test_counts_equal_the_meta_device_references_exactly(slug):
    """Failed before these readers: model_type qwen3 / qwen3_moe / qwen2_moe / llama4 /
    gemma3 / gemma3_text is not supported."""
    expected = REFERENCES[slug]
    arch = architecture_from_config(bundled_config(slug))
    assert arch.params_total == expected["total_params"]
    assert arch.params_active == expected["active_params"]
    assert arch.kv_bytes_per_token(2) == expected["kv_bytes_per_token_bf16"]


@pytest.mark.parametrize("slug", SLUGS)
def test_bundled_with_an_index_entry_naming_its_hub_id_and_source(slug):
    model = bundled_models()[slug]
    assert model.source_url == f"https://huggingface.co/{model.hf_id}/blob/main/config.json"
    assert model.architecture().params_total == REFERENCES[slug]["total_params"]


@pytest.mark.parametrize(
    ("slug", "billions_total", "billions_active"),
    [
        ("qwen3-30b-a3b", 30.5, 3.4),  # card: "30.5B total, 3.3B activated" (3.35B)
        ("qwen3-235b-a22b", 235.1, 22.2),  # "235B total, 22B activated"
        ("qwen1.5-moe-a2.7b", 14.3, 2.7),  # "14.3B total, 2.7B activated"
        # "17B (Activated) 109B (Total)" and "17B (Activated) 400B (Total)", the vision
        # tower included; transformers' Llama 4 page: "109B, and 402B parameters"
        ("llama-4-scout-17b-16e", 108.6, 17.2),
        ("llama-4-maverick-17b-128e", 401.6, 17.2),
        ("gemma-3-27b", 27.4, 27.0),  # 27.4B with the SigLIP tower, idle for text tokens
    ],
)
def test_models_match_their_announced_sizes(slug, billions_total, billions_active):
    arch = bundled_models()[slug].architecture()
    assert round(arch.params_total / 1e9, 1) == billions_total
    assert round(arch.params_active / 1e9, 1) == billions_active


QWEN3 = {
    "model_type": "qwen3",
    "hidden_size": 64,
    "num_hidden_layers": 4,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 32,
    "intermediate_size": 128,
    "vocab_size": 1000,
}


def test_qwen3_q_and_k_norms_add_two_head_dims_per_layer_to_llama():
    qwen3 = architecture_from_config(QWEN3)
    llama = architecture_from_config({**QWEN3, "model_type": "llama"})
    assert qwen3.params_total - llama.params_total == 4 * 2 * 32
    assert qwen3.kv_bytes_per_token(2) == llama.kv_bytes_per_token(2) == 4 * 2 * 2 * 32 * 2


def test_qwen3_sliding_window_applies_from_max_window_layers_when_enabled():
    arch = architecture_from_config(
        {**QWEN3, "use_sliding_window": True, "sliding_window": 16, "max_window_layers": 1}
    )
    assert (arch.sliding_window, arch.sliding_window_layers) == (16, 3)
    assert architecture_from_config({**QWEN3, "sliding_window": 16}).sliding_window is None


QWEN3_MOE = {
    **QWEN3,
    "model_type": "qwen3_moe",
    "num_experts": 8,
    "num_experts_per_tok": 2,
    "moe_intermediate_size": 16,
}


def test_qwen3_moe_sparse_step_and_mlp_only_layers_choose_the_moe_layers():
    h, expert, router, dense = 64, 3 * 64 * 16, 64 * 8, 3 * 64 * 128
    all_moe = architecture_from_config(QWEN3_MOE)
    # Layers 2 and 4 (counting from 1) are sparse; layer index 3 is then listed as dense.
    some = architecture_from_config({**QWEN3_MOE, "decoder_sparse_step": 2, "mlp_only_layers": [3]})
    per_moe_layer = 8 * expert + router
    assert all_moe.params_total - some.params_total == 3 * per_moe_layer - 3 * dense
    assert all_moe.params_total - all_moe.params_active == 4 * 6 * expert
    assert some.params_total - some.params_active == 1 * 6 * expert
    assert h == all_moe.hidden_size


def test_qwen2_moe_shared_expert_and_its_gate_are_used_by_every_token():
    config = {
        **QWEN3_MOE,
        "model_type": "qwen2_moe",
        "shared_expert_intermediate_size": 32,
    }
    narrow = architecture_from_config(config)
    wide = architecture_from_config({**config, "shared_expert_intermediate_size": 64})
    assert wide.params_total - narrow.params_total == 4 * 3 * 64 * 32
    assert wide.params_active - narrow.params_active == 4 * 3 * 64 * 32
    # Attention has q, k and v biases (qkv_bias defaults to true), no q/k norms.
    unbiased = architecture_from_config({**config, "qkv_bias": False})
    assert narrow.params_total - unbiased.params_total == 4 * (4 * 32 + 2 * 2 * 32)


def test_qwen2_moe_with_every_layer_dense_is_refused():
    with pytest.raises(UnsupportedArchitecture, match="no MoE layer"):
        architecture_from_config(
            {
                **QWEN3_MOE,
                "model_type": "qwen2_moe",
                "shared_expert_intermediate_size": 32,
                "mlp_only_layers": [0, 1, 2, 3],
            }
        )


LLAMA4_TEXT = {
    "model_type": "llama4_text",
    "hidden_size": 64,
    "num_hidden_layers": 8,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "intermediate_size": 32,
    "intermediate_size_mlp": 96,
    "num_local_experts": 4,
    "num_experts_per_tok": 1,
    "interleave_moe_layer_step": 2,
    "attention_chunk_size": 128,
    "vocab_size": 500,
}


def test_llama4_nope_layers_attend_globally_and_the_chunked_ones_keep_one_chunk():
    arch = architecture_from_config(LLAMA4_TEXT)
    # Every 4th layer is NoPE (global): 2 of 8; the other 6 attend within 128-token chunks.
    assert (arch.sliding_window, arch.sliding_window_layers) == (128, 6)
    per_layer_token = 2 * 2 * 16 * 2  # K and V, 2 KV heads of 16, 2 bytes
    assert arch.kv_bytes_per_token(2) == 8 * per_layer_token
    assert arch.kv_cache_bytes(10_000, 1, 2) == per_layer_token * (2 * 10_000 + 6 * 128)
    explicit = architecture_from_config({**LLAMA4_TEXT, "no_rope_layers": [1, 0] * 4})
    assert explicit.sliding_window_layers == 4
    unchunked = architecture_from_config({**LLAMA4_TEXT, "attention_chunk_size": None})
    assert unchunked.kv_cache_bytes(10_000, 1, 2) == per_layer_token * 8 * 10_000


def test_llama4_interleaves_moe_layers_with_dense_ones_and_keeps_a_shared_expert():
    h, expert = 64, 3 * 64 * 32
    arch = architecture_from_config(LLAMA4_TEXT)
    all_moe = architecture_from_config({**LLAMA4_TEXT, "interleave_moe_layer_step": 1})
    moe_layer = 4 * expert + expert + h * 4  # routed, shared, router
    assert all_moe.params_total - arch.params_total == 4 * moe_layer - 4 * 3 * h * 96
    assert arch.params_total - arch.params_active == 4 * 3 * expert  # 3 unused of 4, 4 layers
    listed = architecture_from_config({**LLAMA4_TEXT, "moe_layers": [0]})
    assert listed.params_routed_experts == 4 * expert


def test_llama4_wrapper_without_vision_config_says_the_vision_tower_is_not_included():
    text = architecture_from_config(LLAMA4_TEXT)
    wrapped = architecture_from_config(
        {"model_type": "llama4", "text_config": {**LLAMA4_TEXT, "model_type": "llama4_text"}}
    )
    assert wrapped.params_total == text.params_total
    assert any("vision tower" in note and "not included" in note for note in wrapped.notes)


@pytest.mark.parametrize(
    ("slug", "hub_total"),
    [
        # The Hub's parameter count of meta-llama/Llama-4-Scout-17B-16E-Instruct; Maverick's as
        # Fireworks' billing export lists it (docs.fireworks.ai, "Exporting Billing Metrics").
        ("llama-4-scout-17b-16e", 108_641_793_536),
        ("llama-4-maverick-17b-128e", 401_583_781_376),
    ],
)
def test_llama4_counts_its_vision_encoder_and_equals_the_published_total(slug, hub_total):
    config = bundled_config(slug)
    text = architecture_from_config({**config["text_config"], "model_type": "llama4_text"})
    wrapped = architecture_from_config(config)
    assert wrapped.params_total == hub_total
    # A ViT-style encoder of 34 layers at 1,408 wide: each layer 4 x 1,982,464 + 4 x 1,408
    # (q, k, v, o) + 2 x 7,929,856 + 5,632 + 1,408 (fc1, fc2) + 4 x 1,408 (LayerNorms); the
    # pixel-shuffle adapter 23,068,672 + 16,777,216 and the projector 20,971,520, as a
    # published module table of the checkpoint lists them.
    layer = 4 * 1_982_464 + 4 * 1_408 + 2 * 7_929_856 + 5_632 + 1_408 + 4 * 1_408
    embedding = 1_408 + 812_416 + 827_904 + 4 * 1_408
    tower = embedding + 34 * layer + 23_068_672 + 16_777_216 + 20_971_520
    assert wrapped.params_vision == tower
    assert wrapped.params_total - text.params_total == tower
    # Idle for text tokens: the active parameters and the KV cache are the text model's.
    assert wrapped.params_active == text.params_active
    assert wrapped.kv_bytes_per_token(2) == text.kv_bytes_per_token(2)


GEMMA3_TEXT = {
    "model_type": "gemma3_text",
    "hidden_size": 64,
    "num_hidden_layers": 12,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "intermediate_size": 128,
    "sliding_window": 64,
    "vocab_size": 300,
}


def test_gemma3_five_local_layers_per_global_one_shrink_a_long_contexts_kv_cache():
    arch = architecture_from_config(GEMMA3_TEXT)
    assert (arch.sliding_window, arch.sliding_window_layers) == (64, 10)
    per_layer_token = 2 * 2 * 16 * 2
    tokens = 4096
    full = architecture_from_config({**GEMMA3_TEXT, "sliding_window_pattern": 1})
    assert full.sliding_window_layers == 0
    assert full.kv_cache_bytes(tokens, 1, 2) - arch.kv_cache_bytes(tokens, 1, 2) == (
        10 * (tokens - 64) * per_layer_token
    )
    # Within the window every layer holds every token.
    assert arch.kv_cache_bytes(64, 1, 2) == full.kv_cache_bytes(64, 1, 2)


def test_gemma3_qk_norms_four_layer_norms_and_tied_embeddings():
    h, layers, inter = 64, 12, 128
    attention = h * 4 * 16 + 2 * h * 2 * 16 + 4 * 16 * h
    expected = 300 * h + h + layers * (attention + 2 * 16 + 4 * h + 3 * h * inter)
    assert architecture_from_config(GEMMA3_TEXT).params_total == expected
    # The Gemma3TextConfig default vocabulary (262,208) when vocab_size is left out.
    unsized = {key: value for key, value in GEMMA3_TEXT.items() if key != "vocab_size"}
    assert architecture_from_config(unsized).vocab_size == 262_208


def test_gemma3_wrapper_adds_the_vision_tower_when_vision_config_gives_its_shapes():
    config = bundled_config("gemma-3-4b")
    text = architecture_from_config({**config["text_config"], "model_type": "gemma3_text"})
    wrapped = architecture_from_config(config)
    # SigLIP-400M at 896 px: 416,866,032; the projector: 1152 x 2560 + 1152.
    assert wrapped.params_total - text.params_total == 416_866_032 + 1152 * 2560 + 1152
    assert wrapped.kv_bytes_per_token(2) == text.kv_bytes_per_token(2)
    assert any("vision tower" in note and "includes" in note for note in wrapped.notes)
    bare = architecture_from_config({k: v for k, v in config.items() if k != "vision_config"})
    assert bare.params_total == text.params_total
    assert any("not included" in note for note in bare.notes)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({**QWEN3_MOE, "mlp_only_layers": [9]}, "mlp_only_layers must list layer indices"),
        ({**QWEN3_MOE, "num_experts_per_tok": 9}, "num_experts_per_tok=9 exceeds num_experts"),
        ({**LLAMA4_TEXT, "no_rope_layers": [1, 0]}, "no_rope_layers must give 0 or 1"),
        ({**LLAMA4_TEXT, "moe_layers": "all"}, "moe_layers must list layer indices"),
        ({"model_type": "gemma3", "text_config": []}, "text_config must be a JSON object"),
        (
            {"model_type": "llama4", "text_config": {**LLAMA4_TEXT, "model_type": "llama"}},
            "text_config.model_type must be llama4_text",
        ),
    ],
)
def test_malformed_family_fields_are_refused_naming_the_field(config, message):
    with pytest.raises(UnsupportedArchitecture, match=message):
        architecture_from_config(config)
