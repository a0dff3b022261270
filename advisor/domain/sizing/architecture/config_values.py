"""The typed reading of config.json fields, shared by every family's reader.

Each reader takes a field through one of these, so a missing field, a value of the wrong JSON
type or one outside FIELD_LIMITS is refused with a message naming the field, the same way in
every family.
"""

from collections.abc import Mapping
from typing import Any

from advisor.domain.sizing.architecture.model import UnsupportedArchitecture

# The largest value accepted for every field the readers use: generous physical limits, far
# beyond any published model (Llama-3.1-405B: 126 layers, hidden size 16,384, 128,256 tokens;
# DeepSeek-V3: 256 routed experts; 10M-token contexts), so that a typo or a hostile config is
# refused by name instead of becoming an answer about 10^100 parameters.
FIELD_LIMITS: dict[str, int] = {
    # layers
    "num_hidden_layers": 10_000,
    "n_layer": 10_000,
    "num_layers": 10_000,
    "num_decoder_layers": 10_000,
    "first_k_dense_replace": 10_000,
    "moe_layer_freq": 10_000,
    # widths
    "hidden_size": 1_048_576,
    "n_embd": 1_048_576,
    "d_model": 1_048_576,
    "intermediate_size": 4_194_304,
    "moe_intermediate_size": 4_194_304,
    "ffn_hidden_size": 4_194_304,
    "n_inner": 4_194_304,
    "d_ff": 4_194_304,
    "kv_lora_rank": 1_048_576,
    "q_lora_rank": 1_048_576,
    # attention heads and their widths
    "num_attention_heads": 65_536,
    "n_head": 65_536,
    "num_heads": 65_536,
    "num_key_value_heads": 65_536,
    "num_kv_heads": 65_536,
    "head_dim": 65_536,
    "d_kv": 65_536,
    "qk_nope_head_dim": 65_536,
    "qk_rope_head_dim": 65_536,
    "v_head_dim": 65_536,
    "relative_attention_num_buckets": 65_536,
    "num_ln_in_parallel_attn": 2,
    # vocabularies
    "vocab_size": 10_000_000,
    "type_vocab_size": 10_000_000,
    # experts
    "num_local_experts": 100_000,
    "n_routed_experts": 100_000,
    "n_shared_experts": 100_000,
    "num_experts_per_tok": 100_000,
    # positions (tokens)
    "max_position_embeddings": 100_000_000,
    "n_positions": 100_000_000,
    "sliding_window": 100_000_000,
    "sliding_window_pattern": 10_000,  # Cohere-2: every n-th layer global, the rest windowed
    # Qwen2-MoE / Qwen3 / Qwen3-MoE, Llama 4, Gemma 3 (and its SigLIP vision tower)
    "num_experts": 100_000,
    "shared_expert_intermediate_size": 4_194_304,
    "decoder_sparse_step": 10_000,
    "max_window_layers": 10_000,
    "intermediate_size_mlp": 4_194_304,
    "interleave_moe_layer_step": 10_000,
    "no_rope_layer_interval": 10_000,
    "attention_chunk_size": 100_000_000,
    "image_size": 1_048_576,
    "patch_size": 1_048_576,
    "num_channels": 1_024,
    # Mistral 3's projector merges spatial_merge_size^2 patches into one token
    "spatial_merge_size": 1_024,
    # Llama 4's vision adapter and projector widths
    "projector_input_dim": 1_048_576,
    "projector_output_dim": 1_048_576,
    "vision_output_dim": 1_048_576,
}
# 10 trillion parameters: beyond any published model; the bound for a bare count too.
MAX_PARAMS_TOTAL = 10**13
_SHOWN_CHARACTERS = 40


def shown(value: Any) -> str:
    """A wrong value as the message shows it: short, however long the input."""
    text = repr(value)
    if len(text) <= _SHOWN_CHARACTERS:
        return text
    return f"{text[:_SHOWN_CHARACTERS]}... ({len(text):,} characters)"


def whole(name: str, value: Any, minimum: int) -> int:
    """`value` as a count of at least `minimum` and at most the field's limit; booleans, floats
    (1e308, NaN, Infinity), strings and containers are refused."""
    maximum = FIELD_LIMITS[name]
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        kind = (
            f"a positive integer of at most {maximum:,}"
            if minimum == 1
            else f"a whole number from {minimum:,} to {maximum:,}"
        )
        raise UnsupportedArchitecture(f"{name} must be {kind}, got {shown(value)}")
    return value


def optional_int(
    config: Mapping[str, Any], name: str, default: int, minimum: int = 1, null_ok: bool = True
) -> int:
    """An optional count: absent gives `default`, and so does null where the model reads null
    as "the default" (GPT-2's n_inner, DeepSeek's q_lora_rank); anything else must be a whole
    number from `minimum` to the field's limit."""
    if name not in config:
        return default
    value = config[name]
    if value is None and null_ok:
        return default
    return whole(name, value, minimum)


def positive_int(config: Mapping[str, Any], *names: str, default: int | None = None) -> int:
    """The first of `names` the config sets (not null), else `default`, else a refusal."""
    for name in names:
        if config.get(name) is not None:
            return whole(name, config[name], 1)
    if default is None:
        raise UnsupportedArchitecture(f"config.json has no {' / '.join(names)}")
    return default


def flag(config: Mapping[str, Any], name: str, default: bool) -> bool:
    value = config.get(name)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise UnsupportedArchitecture(f"{name} must be true or false, got {shown(value)}")
    return value


def optional_text(config: Mapping[str, Any], name: str, default: str | None = None) -> str | None:
    """Absent gives `default`; a value, null included, must be a string (the model would call
    string methods on it)."""
    if name not in config:
        return default
    value = config[name]
    if not isinstance(value, str):
        raise UnsupportedArchitecture(f"{name} must be a string, got {shown(value)}")
    return value


def split_head_dim(hidden: int, heads: int, hidden_name: str, heads_name: str) -> int:
    """hidden / heads, for the families whose attention splits the hidden size evenly."""
    if hidden % heads:
        raise UnsupportedArchitecture(
            f"{hidden_name}={hidden:,} is not a multiple of {heads_name}={heads:,}"
        )
    return hidden // heads


def layer_kinds(
    config: Mapping[str, Any], layers: int, kinds: frozenset[str]
) -> tuple[str, ...] | None:
    """`layer_types`: one of `kinds` per layer (absent or null: None, the family's default)."""
    value = config.get("layer_types")
    if value is None:
        return None
    if (
        not isinstance(value, list)
        or len(value) != layers
        or not all(isinstance(kind, str) and kind in kinds for kind in value)
    ):
        raise UnsupportedArchitecture(
            f"layer_types must list one of {', '.join(sorted(kinds))} for each of the "
            f"{layers:,} layers, got {shown(value)}"
        )
    return tuple(value)


def sub_config(config: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    """A nested config object (a multimodal model's `text_config`)."""
    value = config.get(name)
    if not isinstance(value, Mapping):
        raise UnsupportedArchitecture(f"{name} must be a JSON object, got {shown(value)}")
    return value


def index_list(config: Mapping[str, Any], name: str, layers: int) -> tuple[int, ...]:
    """A list of layer indices, each from 0 to layers - 1 (absent or null: none)."""
    value = config.get(name)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(
        isinstance(i, int) and not isinstance(i, bool) and 0 <= i < layers for i in value
    ):
        raise UnsupportedArchitecture(
            f"{name} must list layer indices from 0 to {layers - 1:,}, got {shown(value)}"
        )
    return tuple(value)


def flag_list(config: Mapping[str, Any], name: str, layers: int) -> tuple[bool, ...] | None:
    """One 0/1 (or true/false) per layer (absent, null or empty: None, the family's default)."""
    value = config.get(name)
    if value is None or value == []:
        return None
    if (
        not isinstance(value, list)
        or len(value) != layers
        or not all(isinstance(v, int) and v in (0, 1) for v in value)
    ):
        raise UnsupportedArchitecture(
            f"{name} must give 0 or 1 for each of the {layers:,} layers, got {shown(value)}"
        )
    return tuple(bool(v) for v in value)
