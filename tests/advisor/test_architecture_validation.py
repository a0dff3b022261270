"""The architecture readers refuse every malformed config.json themselves, naming the field.

One place decides (the advisor/domain/sizing/architecture package), so the API, the page and `size`
give the same answer (tests/advisor/test_config_errors.py). Before this, wrong JSON types
escaped as TypeError / OverflowError (a 500 on the API), and absurd numbers such as
num_hidden_layers = 10**300 were counted as if they were a model.
"""

import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from advisor.domain.sizing.architecture import (
    FIELD_LIMITS,
    MAX_PARAMS_TOTAL,
    ModelArchitecture,
    UnsupportedArchitecture,
    architecture_from_config,
)
from advisor.domain.sizing.bundled_models import MODELS_DIR
from tests.helpers import bundled_config as bundled

# One bundled config per reader and variant: every field below is read by at least one.
FAMILY_CONFIGS = {
    slug: bundled(slug)
    for slug in (
        "llama-3.1-8b",
        "mistral-7b-v0.1",
        "mixtral-8x7b-v0.1",
        "qwen2.5-7b",
        "phi-3-mini-4k",
        "gemma-7b",
        "gemma-2-9b",
        "deepseek-v2",
        "deepseek-v2-lite",
        "falcon-7b",
        "falcon-40b",
        "gpt2",
        "bert-base-uncased",
        "t5-base",
        "flan-t5-xl",
        "gpt-oss-20b",
        "glm-4.5-air",
        "mistral-small-3.2-24b",
        "qwen3-8b",
        "qwen3-30b-a3b",
        "qwen1.5-moe-a2.7b",
        "gemma-3-1b",
        "gemma-3-4b",
        "llama-4-maverick-17b-128e",
    )
}
# Llama 4's text model read alone (llama4_text), so that its fields are fuzzed where they are read.
FAMILY_CONFIGS["llama4-text"] = {
    **FAMILY_CONFIGS["llama-4-maverick-17b-128e"]["text_config"],
    "model_type": "llama4_text",
}
# Cohere-2 has no bundled config yet: its hand-made one (checked on the meta device) stands in.
FAMILY_CONFIGS["tiny-cohere2"] = json.loads(
    (Path(__file__).resolve().parents[1] / "fixtures" / "tiny_family_configs.json").read_text()
)["tiny-cohere2"]
FLAGS = (
    "tie_word_embeddings",
    "attention_bias",
    "mlp_bias",
    "use_sliding_window",
    "new_decoder_architecture",
    "multi_query",
    "parallel_attn",
    "bias",
    "use_qk_norm",
    "qkv_bias",
)
TEXTS = ("model_type", "topk_method", "feed_forward_proj", "_name_or_path")
LAYER_LISTS = ("mlp_only_layers", "moe_layers", "no_rope_layers")
READ_FIELDS = (
    *(*FIELD_LIMITS, *FLAGS, *TEXTS, *LAYER_LISTS),
    *("quantization_config", "layer_types", "text_config"),
)

# The config in which each bounded field is read, to test its limit.
FIELD_HOME = {
    "num_hidden_layers": "llama-3.1-8b",
    "n_layer": "gpt2",
    "num_layers": "t5-base",
    "num_decoder_layers": "t5-base",
    "first_k_dense_replace": "deepseek-v2-lite",
    "moe_layer_freq": "deepseek-v2-lite",
    "hidden_size": "llama-3.1-8b",
    "n_embd": "gpt2",
    "d_model": "t5-base",
    "intermediate_size": "llama-3.1-8b",
    "moe_intermediate_size": "deepseek-v2-lite",
    "ffn_hidden_size": "falcon-40b",
    "n_inner": "gpt2",
    "d_ff": "t5-base",
    "kv_lora_rank": "deepseek-v2-lite",
    "q_lora_rank": "deepseek-v2",
    "num_attention_heads": "llama-3.1-8b",
    "n_head": "gpt2",
    "num_heads": "t5-base",
    "num_key_value_heads": "llama-3.1-8b",
    "num_kv_heads": "falcon-40b",
    "head_dim": "gemma-7b",
    "d_kv": "t5-base",
    "qk_nope_head_dim": "deepseek-v2-lite",
    "qk_rope_head_dim": "deepseek-v2-lite",
    "v_head_dim": "deepseek-v2-lite",
    "relative_attention_num_buckets": "t5-base",
    "num_ln_in_parallel_attn": "falcon-40b",
    "vocab_size": "llama-3.1-8b",
    "type_vocab_size": "bert-base-uncased",
    "num_local_experts": "mixtral-8x7b-v0.1",
    "n_routed_experts": "deepseek-v2-lite",
    "n_shared_experts": "deepseek-v2-lite",
    "num_experts_per_tok": "mixtral-8x7b-v0.1",
    "max_position_embeddings": "llama-3.1-8b",
    "n_positions": "gpt2",
    "sliding_window": "mistral-7b-v0.1",
    "sliding_window_pattern": "tiny-cohere2",
    "num_experts": "qwen3-30b-a3b",
    "shared_expert_intermediate_size": "qwen1.5-moe-a2.7b",
    "decoder_sparse_step": "qwen3-30b-a3b",
    "max_window_layers": "qwen1.5-moe-a2.7b",
    "intermediate_size_mlp": "llama4-text",
    "interleave_moe_layer_step": "llama4-text",
    "no_rope_layer_interval": "llama4-text",
    "attention_chunk_size": "llama4-text",
    # Read inside a nested object: "<config>/<object>".
    "image_size": "gemma-3-4b/vision_config",
    "patch_size": "gemma-3-4b/vision_config",
    "num_channels": "gemma-3-4b/vision_config",
    "spatial_merge_size": "mistral-small-3.2-24b",
    "projector_input_dim": "llama-4-maverick-17b-128e/vision_config",
    "projector_output_dim": "llama-4-maverick-17b-128e/vision_config",
    "vision_output_dim": "llama-4-maverick-17b-128e/vision_config",
}


def with_field(home: str, field: str, value: object) -> dict:
    """FIELD_HOME's config with `field` set, inside the nested object the home names if any."""
    slug, _, nested = home.partition("/")
    config = FAMILY_CONFIGS[slug]
    if nested:
        return {**config, nested: {**config[nested], field: value}}
    return {**config, field: value}


def test_every_bounded_field_has_a_config_that_reads_it():
    assert set(FIELD_HOME) == set(FIELD_LIMITS)


@pytest.mark.parametrize("field", sorted(FIELD_LIMITS))
def test_one_past_a_fields_limit_is_refused_naming_the_field_and_the_limit(field):
    limit = FIELD_LIMITS[field]
    config = with_field(FIELD_HOME[field], field, limit + 1)
    with pytest.raises(UnsupportedArchitecture) as refused:
        architecture_from_config(config)
    message = str(refused.value)
    assert message.startswith(f"{field} must be")
    assert f"at most {limit:,}" in message or f"to {limit:,}" in message


@pytest.mark.parametrize(
    ("field", "value"),
    [("num_hidden_layers", 10**300), ("hidden_size", 10**100), ("vocab_size", 10**4000)],
)
def test_absurd_numbers_are_refused_with_a_short_message(field, value):
    """Failed before the fix: OverflowError (int too large to convert to float), a 500."""
    with pytest.raises(
        UnsupportedArchitecture, match=f"^{field} must be a positive integer of at most"
    ) as refused:
        architecture_from_config({**FAMILY_CONFIGS["llama-3.1-8b"], field: value})
    assert len(str(refused.value)) < 200


@pytest.mark.parametrize(
    "value",
    [1e308, math.nan, math.inf, -math.inf, 32.0, True, False, -32, 0, "32", [32], {"n": 32}],
    ids=repr,
)
def test_a_count_of_the_wrong_kind_is_refused_naming_the_field(value):
    with pytest.raises(UnsupportedArchitecture, match=r"^num_hidden_layers must be"):
        architecture_from_config({**FAMILY_CONFIGS["llama-3.1-8b"], "num_hidden_layers": value})


@pytest.mark.parametrize(
    ("slug", "field", "value", "message"),
    [
        ("t5-base", "feed_forward_proj", [], "feed_forward_proj must be a string"),
        ("t5-base", "feed_forward_proj", None, "feed_forward_proj must be a string"),
        ("t5-base", "feed_forward_proj", {"gated": True}, "feed_forward_proj must be a string"),
        ("t5-base", "feed_forward_proj", "swish", "feed_forward_proj='swish' is not supported"),
        ("llama-3.1-8b", "tie_word_embeddings", "false", "tie_word_embeddings must be true or"),
        ("qwen2.5-7b", "use_sliding_window", 1, "use_sliding_window must be true or false"),
        ("falcon-7b", "multi_query", [], "multi_query must be true or false"),
        ("deepseek-v2", "topk_method", 7, "topk_method must be a string"),
        ("llama-3.1-8b", "model_type", ["llama"], "model_type=['llama'] is not supported"),
        ("llama-3.1-8b", "num_key_value_heads", 3, "num_key_value_heads=3 does not divide"),
        ("llama-3.1-8b", "num_attention_heads", 8192, "num_attention_heads=8,192 exceeds"),
        ("falcon-7b", "num_attention_heads", 7, "hidden_size=4,544 is not a multiple of"),
        ("gpt2", "n_head", 7, "n_embd=768 is not a multiple of n_head=7"),
        ("deepseek-v2-lite", "first_k_dense_replace", 28, "exceeds num_hidden_layers=27"),
        ("falcon-40b", "num_ln_in_parallel_attn", 3, "num_ln_in_parallel_attn must be"),
    ],
)
def test_wrong_types_and_inconsistent_shapes_are_refused_naming_the_field(
    slug, field, value, message
):
    """The T5 case failed before the fix: TypeError (unhashable type: 'list'), a 500 on the
    API."""
    with pytest.raises(UnsupportedArchitecture) as refused:
        architecture_from_config({**FAMILY_CONFIGS[slug], field: value})
    assert message in str(refused.value)


def test_a_config_within_every_field_limit_but_beyond_ten_trillion_parameters_is_refused():
    config = {
        **FAMILY_CONFIGS["llama-3.1-8b"],
        "num_hidden_layers": 10_000,
        "hidden_size": 65_536,
        "intermediate_size": 262_144,
    }
    with pytest.raises(
        UnsupportedArchitecture, match=f"largest model accepted has {MAX_PARAMS_TOTAL:,}"
    ):
        architecture_from_config(config)


def test_every_bundled_model_is_within_the_limits():
    for path in sorted(MODELS_DIR.glob("*.json")):
        if path.name != "index.json":
            assert architecture_from_config(json.loads(path.read_text())).params_total > 0


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**400), max_value=10**400)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8)
    | st.sampled_from(["relu", "gated-gelu", "noaux_tc", "llama", "t5", ""]),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=6,
)
mutations = st.dictionaries(
    st.sampled_from(READ_FIELDS), json_values | st.just("<absent>"), min_size=1, max_size=4
)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(slug=st.sampled_from(sorted(FAMILY_CONFIGS)), changes=mutations)
def test_any_json_in_any_field_read_is_an_architecture_or_a_refusal(slug, changes):
    config = dict(FAMILY_CONFIGS[slug])
    for field, value in changes.items():
        if value == "<absent>":
            config.pop(field, None)
        else:
            config[field] = value
    try:
        architecture = architecture_from_config(config)
    except UnsupportedArchitecture as refusal:
        assert str(refusal) and len(str(refusal)) < 400
        return
    assert isinstance(architecture, ModelArchitecture)
    assert 0 < architecture.params_active <= architecture.params_total <= MAX_PARAMS_TOTAL
    assert architecture.num_layers >= 1 and architecture.hidden_size >= 1


small_counts = st.integers(min_value=-2, max_value=300)


@settings(max_examples=400, deadline=None)
@given(
    slug=st.sampled_from(sorted(FAMILY_CONFIGS)),
    changes=st.dictionaries(st.sampled_from(sorted(FIELD_LIMITS)), small_counts, max_size=5),
)
def test_any_small_counts_are_an_architecture_or_a_refusal(slug, changes):
    """Plausible-looking numbers that do not fit together (more experts per token than
    experts, more dense layers than layers, heads that do not divide) are refused too."""
    try:
        architecture = architecture_from_config({**FAMILY_CONFIGS[slug], **changes})
    except UnsupportedArchitecture:
        return
    assert 0 < architecture.params_active <= architecture.params_total
    assert architecture.kv_elements_per_token >= 0
