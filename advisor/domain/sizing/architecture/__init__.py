"""Exact parameter counts and KV-cache size per token from a Hugging Face `config.json`.

Counts follow the module shapes of the `transformers` implementation of each family, so they
equal what instantiating the model reports (checked against counts taken on PyTorch's meta
device). Embeddings tied to the output head are counted once.
"""

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


class UnsupportedArchitecture(ValueError):
    """A config we cannot account for exactly; the message names the field."""


@dataclass(frozen=True)
class LinearGroup:
    """Linear layers a LoRA adapter can target: `count` matrices of in x out across the model."""

    name: str
    in_features: int
    out_features: int
    count: int


@dataclass(frozen=True)
class ModelArchitecture:
    name: str
    family: str
    params_total: int
    params_active: int  # per token: all of a dense model, the routed share of a MoE
    params_embedding: int  # input and output embeddings: kept 16-bit when weights are quantised
    num_layers: int  # layers holding a KV cache (decoder layers)
    hidden_size: int
    intermediate_size: int  # per-token MLP width (active experts summed for MoE)
    num_attention_heads: int
    kv_dim: int  # K (or V) width per token and layer
    num_kv_heads: int  # how far tensor parallelism can split the KV cache (1: replicated)
    vocab_size: int
    kv_elements_per_token: int  # over all layers, K and V (or the MLA latent)
    sliding_window: int | None = None
    sliding_window_layers: int = 0
    gated_mlp: bool = True
    encoder_only: bool = False
    encoder_decoder: bool = False
    largest_layer_params: int = 0
    lora_groups: tuple[LinearGroup, ...] = ()
    params_routed_experts: int = 0  # MoE: all routed-expert weights (each token uses a few)
    routed_fraction_per_token: float = 1.0  # MoE: experts per token / routed experts
    max_positions: int | None = None  # the context the model was built or trained for
    absolute_positions: bool = False  # learned position embeddings: no token past max_positions
    notes: tuple[str, ...] = field(default=())

    @property
    def has_kv_cache(self) -> bool:
        return self.kv_elements_per_token > 0

    def kv_bytes_per_token(self, bytes_per_element: float) -> float:
        return self.kv_elements_per_token * bytes_per_element

    def kv_cache_bytes(
        self, tokens_per_sequence: int, sequences: int, bytes_per_element: float
    ) -> float:
        """KV bytes for `sequences` sequences of `tokens_per_sequence` tokens; sliding-window
        layers keep at most `sliding_window` tokens."""
        if not self.has_kv_cache:
            return 0.0
        per_layer = self.kv_elements_per_token / self.num_layers
        windowed = self.sliding_window_layers
        full = self.num_layers - windowed
        kept_windowed = min(tokens_per_sequence, self.sliding_window or tokens_per_sequence)
        elements = per_layer * (full * tokens_per_sequence + windowed * kept_windowed)
        return elements * sequences * bytes_per_element


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
}
# 10 trillion parameters: beyond any published model; the bound for a bare count too.
MAX_PARAMS_TOTAL = 10**13
_SHOWN_CHARACTERS = 40


def _shown(value: Any) -> str:
    """A wrong value as the message shows it: short, however long the input."""
    text = repr(value)
    if len(text) <= _SHOWN_CHARACTERS:
        return text
    return f"{text[:_SHOWN_CHARACTERS]}... ({len(text):,} characters)"


def _whole(name: str, value: Any, minimum: int) -> int:
    """`value` as a count of at least `minimum` and at most the field's limit; booleans, floats
    (1e308, NaN, Infinity), strings and containers are refused."""
    maximum = FIELD_LIMITS[name]
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        kind = (
            f"a positive integer of at most {maximum:,}"
            if minimum == 1
            else f"a whole number from {minimum:,} to {maximum:,}"
        )
        raise UnsupportedArchitecture(f"{name} must be {kind}, got {_shown(value)}")
    return value


def _optional_int(
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
    return _whole(name, value, minimum)


def _positive_int(config: Mapping[str, Any], *names: str, default: int | None = None) -> int:
    """The first of `names` the config sets (not null), else `default`, else a refusal."""
    for name in names:
        if config.get(name) is not None:
            return _whole(name, config[name], 1)
    if default is None:
        raise UnsupportedArchitecture(f"config.json has no {' / '.join(names)}")
    return default


def _flag(config: Mapping[str, Any], name: str, default: bool) -> bool:
    value = config.get(name)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise UnsupportedArchitecture(f"{name} must be true or false, got {_shown(value)}")
    return value


def _optional_text(config: Mapping[str, Any], name: str, default: str | None = None) -> str | None:
    """Absent gives `default`; a value, null included, must be a string (the model would call
    string methods on it)."""
    if name not in config:
        return default
    value = config[name]
    if not isinstance(value, str):
        raise UnsupportedArchitecture(f"{name} must be a string, got {_shown(value)}")
    return value


def _head_dim(hidden: int, heads: int, hidden_name: str, heads_name: str) -> int:
    """hidden / heads, for the families whose attention splits the hidden size evenly."""
    if hidden % heads:
        raise UnsupportedArchitecture(
            f"{hidden_name}={hidden:,} is not a multiple of {heads_name}={heads:,}"
        )
    return hidden // heads


def _decoder(config: Mapping[str, Any], name: str) -> ModelArchitecture:
    """Llama, Mistral, Mixtral, Qwen2, Phi-3, Gemma, Gemma-2: pre-norm decoders with gated MLPs,
    grouped-query attention, optional biases and mixture-of-experts MLPs."""
    family = config["model_type"]
    h = _positive_int(config, "hidden_size")
    layers = _positive_int(config, "num_hidden_layers")
    heads = _positive_int(config, "num_attention_heads")
    kv_heads = _positive_int(config, "num_key_value_heads", default=heads)
    if heads % kv_heads:
        raise UnsupportedArchitecture(
            f"num_key_value_heads={kv_heads:,} does not divide num_attention_heads={heads:,}"
        )
    if "head_dim" not in config and heads > h:
        raise UnsupportedArchitecture(
            f"num_attention_heads={heads:,} exceeds hidden_size={h:,} (and no head_dim is given)"
        )
    head_dim = _positive_int(config, "head_dim", default=h // heads)
    vocab = _positive_int(config, "vocab_size")
    inter = _positive_int(config, "intermediate_size")
    tied = _flag(config, "tie_word_embeddings", family in {"gemma", "gemma2"})
    q_dim, kv_dim = heads * head_dim, kv_heads * head_dim
    attention_bias = _flag(config, "attention_bias", False)
    qkv_bias = family == "qwen2" or attention_bias
    mlp_bias = _flag(config, "mlp_bias", False)

    attention = h * q_dim + 2 * h * kv_dim + q_dim * h
    if qkv_bias:
        attention += q_dim + 2 * kv_dim
    if attention_bias:
        attention += h
    norms_per_layer = 4 * h if family == "gemma2" else 2 * h  # Gemma-2: pre/post norms on both
    experts = _optional_int(config, "num_local_experts", 0, minimum=0)
    expert_mlp = 3 * h * inter + (2 * inter + h if mlp_bias else 0)
    if experts:
        active_experts = _positive_int(config, "num_experts_per_tok")
        if active_experts > experts:
            raise UnsupportedArchitecture(
                f"num_experts_per_tok={active_experts} exceeds num_local_experts={experts}"
            )
        router = h * experts
        mlp_total, mlp_active = experts * expert_mlp + router, active_experts * expert_mlp + router
        largest = experts * expert_mlp
    else:
        active_experts = 1
        mlp_total = mlp_active = expert_mlp
        largest = 0
    embedding = vocab * h
    head = 0 if tied else vocab * h
    per_layer_total = attention + mlp_total + norms_per_layer
    per_layer_active = attention + mlp_active + norms_per_layer
    total = embedding + head + layers * per_layer_total + h
    active = embedding + head + layers * per_layer_active + h

    window = _optional_int(config, "sliding_window", 0) or None
    if family == "qwen2" and not _flag(config, "use_sliding_window", False):
        window = None
    windowed_layers = 0
    if window:
        # Gemma-2 alternates sliding-window and global layers; the others window every layer.
        windowed_layers = (layers + 1) // 2 if family == "gemma2" else layers
    lora = [
        LinearGroup("q_proj", h, q_dim, layers),
        LinearGroup("k_proj", h, kv_dim, layers),
        LinearGroup("v_proj", h, kv_dim, layers),
        LinearGroup("o_proj", q_dim, h, layers),
        LinearGroup("gate_proj", h, inter, layers * max(experts, 1)),
        LinearGroup("up_proj", h, inter, layers * max(experts, 1)),
        LinearGroup("down_proj", inter, h, layers * max(experts, 1)),
    ]
    return ModelArchitecture(
        name=name,
        family=family,
        params_total=total,
        params_active=active,
        params_embedding=embedding + head,
        num_layers=layers,
        hidden_size=h,
        intermediate_size=inter * active_experts,
        num_attention_heads=heads,
        kv_dim=kv_dim,
        num_kv_heads=kv_heads,
        vocab_size=vocab,
        kv_elements_per_token=2 * layers * kv_dim,
        sliding_window=window if windowed_layers else None,
        sliding_window_layers=windowed_layers,
        largest_layer_params=max(embedding, largest),
        lora_groups=tuple(lora),
        params_routed_experts=layers * experts * expert_mlp,
        routed_fraction_per_token=active_experts / experts if experts else 1.0,
        max_positions=_optional_int(config, "max_position_embeddings", 0) or None,
    )


def _deepseek_v2(config: Mapping[str, Any], name: str) -> ModelArchitecture:
    """DeepSeek-V2/V3: multi-head latent attention (the KV cache holds the compressed latent
    and the shared rotary key) and a MoE with routed and shared experts."""
    h = _positive_int(config, "hidden_size")
    layers = _positive_int(config, "num_hidden_layers")
    heads = _positive_int(config, "num_attention_heads")
    vocab = _positive_int(config, "vocab_size")
    inter = _positive_int(config, "intermediate_size")
    moe_inter = _positive_int(config, "moe_intermediate_size")
    routed = _positive_int(config, "n_routed_experts")
    shared = _optional_int(config, "n_shared_experts", 0, minimum=0)
    top_k = _positive_int(config, "num_experts_per_tok")
    if top_k > routed:
        raise UnsupportedArchitecture(
            f"num_experts_per_tok={top_k} exceeds n_routed_experts={routed}"
        )
    dense_layers = _optional_int(config, "first_k_dense_replace", 0, minimum=0)
    if dense_layers > layers:
        raise UnsupportedArchitecture(
            f"first_k_dense_replace={dense_layers:,} exceeds num_hidden_layers={layers:,}"
        )
    if _optional_int(config, "moe_layer_freq", 1, null_ok=False) != 1:
        raise UnsupportedArchitecture("moe_layer_freq other than 1 is not supported")
    kv_rank = _positive_int(config, "kv_lora_rank")
    q_rank = _optional_int(config, "q_lora_rank", 0, minimum=0)
    nope, rope = (
        _positive_int(config, "qk_nope_head_dim"),
        _positive_int(config, "qk_rope_head_dim"),
    )
    v_head = _positive_int(config, "v_head_dim")
    q_head = nope + rope
    # With q_lora_rank: q_a_proj, q_a_layernorm, q_b_proj; without: one q_proj.
    q_proj = (h * q_rank + q_rank + q_rank * heads * q_head) if q_rank else h * heads * q_head
    attention = (
        q_proj
        + h * (kv_rank + rope)  # kv_a_proj_with_mqa
        + kv_rank  # kv_a_layernorm
        + kv_rank * heads * (nope + v_head)  # kv_b_proj
        + heads * v_head * h  # o_proj
    )
    expert = 3 * h * moe_inter
    gate = routed * h
    if _optional_text(config, "topk_method") == "noaux_tc":
        gate += routed  # DeepSeek-V3's e_score_correction_bias
    shared_mlp = 3 * h * moe_inter * shared
    moe_total = routed * expert + shared_mlp + gate
    moe_active = top_k * expert + shared_mlp + gate
    dense_mlp = 3 * h * inter
    moe_layers = layers - dense_layers
    tied = _flag(config, "tie_word_embeddings", False)
    embedding = vocab * h
    head = 0 if tied else vocab * h
    common = embedding + head + h + layers * (attention + 2 * h) + dense_layers * dense_mlp
    return ModelArchitecture(
        name=name,
        family=config["model_type"],
        params_total=common + moe_layers * moe_total,
        params_active=common + moe_layers * moe_active,
        params_embedding=embedding + head,
        num_layers=layers,
        hidden_size=h,
        intermediate_size=moe_inter * (top_k + shared) if moe_layers else inter,
        num_attention_heads=heads,
        kv_dim=heads * v_head,
        num_kv_heads=1,  # the latent is shared by all heads: every TP rank holds all of it
        vocab_size=vocab,
        kv_elements_per_token=layers * (kv_rank + rope),
        largest_layer_params=max(embedding, routed * expert),
        lora_groups=(
            LinearGroup("q_proj", h, heads * q_head, layers),
            LinearGroup("o_proj", heads * v_head, h, layers),
            LinearGroup("gate_proj", h, moe_inter, moe_layers * routed),
            LinearGroup("up_proj", h, moe_inter, moe_layers * routed),
            LinearGroup("down_proj", moe_inter, h, moe_layers * routed),
        ),
        params_routed_experts=moe_layers * routed * expert,
        routed_fraction_per_token=top_k / routed,
        max_positions=_optional_int(config, "max_position_embeddings", 0) or None,
        notes=("KV cache holds the MLA latent (kv_lora_rank + qk_rope_head_dim per layer)",),
    )


def _falcon(config: Mapping[str, Any], name: str) -> ModelArchitecture:
    """Falcon: fused QKV, multi-query (7B) or grouped (40B/180B) attention, parallel blocks."""
    h = _positive_int(config, "hidden_size")
    layers = _positive_int(config, "num_hidden_layers")
    heads = _positive_int(config, "num_attention_heads")
    vocab = _positive_int(config, "vocab_size")
    head_dim = _head_dim(h, heads, "hidden_size", "num_attention_heads")
    new_arch = _flag(config, "new_decoder_architecture", False)
    if new_arch:
        kv_heads = _positive_int(config, "num_kv_heads")
    else:
        kv_heads = 1 if _flag(config, "multi_query", True) else heads
    if not _flag(config, "parallel_attn", True) and not new_arch:
        raise UnsupportedArchitecture("parallel_attn=false Falcon variants are not supported")
    inter = _optional_int(config, "ffn_hidden_size", 4 * h)
    bias = _flag(config, "bias", False)
    qkv = h * (heads + 2 * kv_heads) * head_dim + (bias and (heads + 2 * kv_heads) * head_dim)
    dense = h * h + (bias and h)
    mlp = 2 * h * inter + (bias and inter + h)
    norms_per_block = _optional_int(config, "num_ln_in_parallel_attn", 2) if new_arch else 1
    norms = norms_per_block * 2 * h
    per_layer = qkv + dense + mlp + norms
    embedding = vocab * h
    tied = _flag(config, "tie_word_embeddings", True)
    head = 0 if tied else vocab * h
    total = embedding + head + layers * per_layer + 2 * h
    return ModelArchitecture(
        name=name,
        family="falcon",
        params_total=total,
        params_active=total,
        params_embedding=embedding + head,
        num_layers=layers,
        hidden_size=h,
        intermediate_size=inter,
        num_attention_heads=heads,
        kv_dim=kv_heads * head_dim,
        num_kv_heads=kv_heads,
        vocab_size=vocab,
        kv_elements_per_token=2 * layers * kv_heads * head_dim,
        gated_mlp=False,
        largest_layer_params=embedding,
        lora_groups=(
            LinearGroup("query_key_value", h, (heads + 2 * kv_heads) * head_dim, layers),
            LinearGroup("dense", h, h, layers),
            LinearGroup("dense_h_to_4h", h, inter, layers),
            LinearGroup("dense_4h_to_h", inter, h, layers),
        ),
    )


def _gpt2(config: Mapping[str, Any], name: str) -> ModelArchitecture:
    h = _positive_int(config, "n_embd", "hidden_size")
    layers = _positive_int(config, "n_layer", "num_hidden_layers")
    heads = _positive_int(config, "n_head", "num_attention_heads")
    vocab = _positive_int(config, "vocab_size")
    positions = _positive_int(config, "n_positions", "max_position_embeddings")
    _head_dim(h, heads, "n_embd", "n_head")
    inter = _optional_int(config, "n_inner", 4 * h)
    per_layer = (
        2 * h  # ln_1
        + h * 3 * h
        + 3 * h  # c_attn
        + h * h
        + h  # attn c_proj
        + 2 * h  # ln_2
        + h * inter
        + inter  # mlp c_fc
        + inter * h
        + h  # mlp c_proj
    )
    embedding = vocab * h
    tied = _flag(config, "tie_word_embeddings", True)
    total = embedding + positions * h + layers * per_layer + 2 * h + (0 if tied else vocab * h)
    return ModelArchitecture(
        name=name,
        family="gpt2",
        max_positions=positions,
        absolute_positions=True,
        params_total=total,
        params_active=total,
        params_embedding=embedding + (0 if tied else vocab * h),
        num_layers=layers,
        hidden_size=h,
        intermediate_size=inter,
        num_attention_heads=heads,
        kv_dim=h,
        num_kv_heads=heads,
        vocab_size=vocab,
        kv_elements_per_token=2 * layers * h,
        gated_mlp=False,
        largest_layer_params=embedding,
        lora_groups=(
            LinearGroup("c_attn", h, 3 * h, layers),
            LinearGroup("c_proj", h, h, layers),
            LinearGroup("c_fc", h, inter, layers),
            LinearGroup("mlp.c_proj", inter, h, layers),
        ),
    )


def _bert(config: Mapping[str, Any], name: str) -> ModelArchitecture:
    """BERT as `AutoModel` loads it (BertModel with pooler, no task head): encoder only."""
    h = _positive_int(config, "hidden_size")
    layers = _positive_int(config, "num_hidden_layers")
    heads = _positive_int(config, "num_attention_heads")
    vocab = _positive_int(config, "vocab_size")
    inter = _positive_int(config, "intermediate_size")
    positions = _positive_int(config, "max_position_embeddings")
    _head_dim(h, heads, "hidden_size", "num_attention_heads")
    token_types = _optional_int(config, "type_vocab_size", 2, minimum=0, null_ok=False)
    per_layer = 4 * (h * h + h) + 2 * h + (h * inter + inter) + (inter * h + h) + 2 * h
    embedding = vocab * h
    total = embedding + positions * h + token_types * h + 2 * h + layers * per_layer + h * h + h
    return ModelArchitecture(
        name=name,
        family="bert",
        params_total=total,
        params_active=total,
        params_embedding=embedding,
        num_layers=layers,
        hidden_size=h,
        intermediate_size=inter,
        num_attention_heads=heads,
        kv_dim=h,
        num_kv_heads=heads,
        vocab_size=vocab,
        kv_elements_per_token=0,
        gated_mlp=False,
        encoder_only=True,
        max_positions=positions,
        absolute_positions=True,
        largest_layer_params=embedding,
        lora_groups=(
            LinearGroup("query", h, h, layers),
            LinearGroup("key", h, h, layers),
            LinearGroup("value", h, h, layers),
            LinearGroup("attention.output.dense", h, h, layers),
            LinearGroup("intermediate.dense", h, inter, layers),
            LinearGroup("output.dense", inter, h, layers),
        ),
        notes=("encoder-only: no KV cache",),
    )


def _t5(config: Mapping[str, Any], name: str) -> ModelArchitecture:
    d = _positive_int(config, "d_model")
    d_kv = _positive_int(config, "d_kv")
    heads = _positive_int(config, "num_heads")
    d_ff = _positive_int(config, "d_ff")
    vocab = _positive_int(config, "vocab_size")
    enc_layers = _positive_int(config, "num_layers")
    dec_layers = _optional_int(config, "num_decoder_layers", enc_layers)
    buckets = _optional_int(config, "relative_attention_num_buckets", 32, null_ok=False)
    projection = _optional_text(config, "feed_forward_proj", "relu")
    if projection not in {"relu", "gelu", "gated-gelu", "gated-relu", "gated-silu"}:
        raise UnsupportedArchitecture(f"feed_forward_proj={projection!r} is not supported")
    gated = projection.startswith("gated-")
    inner = heads * d_kv
    attention = 4 * d * inner
    ff = (3 if gated else 2) * d * d_ff
    encoder = enc_layers * (attention + d + ff + d) + heads * buckets + d
    decoder = dec_layers * (2 * attention + ff + 3 * d) + heads * buckets + d
    embedding = vocab * d
    tied = _flag(config, "tie_word_embeddings", True)
    head = 0 if tied else vocab * d
    total = embedding + head + encoder + decoder
    return ModelArchitecture(
        name=name,
        family="t5",
        params_total=total,
        params_active=total,
        params_embedding=embedding + head,
        num_layers=dec_layers,
        hidden_size=d,
        intermediate_size=d_ff,
        num_attention_heads=heads,
        kv_dim=inner,
        num_kv_heads=heads,
        vocab_size=vocab,
        kv_elements_per_token=2 * dec_layers * inner,
        gated_mlp=gated,
        encoder_decoder=True,
        largest_layer_params=embedding,
        lora_groups=(
            LinearGroup("q", d, inner, enc_layers + 2 * dec_layers),
            LinearGroup("v", d, inner, enc_layers + 2 * dec_layers),
        ),
        notes=(
            "KV per generated token is the decoder self-attention cache; cross-attention adds "
            "the same per encoder token",
        ),
    )


FAMILIES: dict[str, Callable[[Mapping[str, Any], str], ModelArchitecture]] = {
    "llama": _decoder,
    "mistral": _decoder,
    "mixtral": _decoder,
    "qwen2": _decoder,
    "phi3": _decoder,
    "gemma": _decoder,
    "gemma2": _decoder,
    "deepseek_v2": _deepseek_v2,
    "deepseek_v3": _deepseek_v2,
    "falcon": _falcon,
    "gpt2": _gpt2,
    "bert": _bert,
    "t5": _t5,
}


def architecture_from_config(config: Mapping[str, Any], name: str = "") -> ModelArchitecture:
    """Count parameters exactly from a Hugging Face config; refuse what we cannot count.

    Every refusal is UnsupportedArchitecture naming the field: a missing field, a value of the
    wrong JSON type, or one outside FIELD_LIMITS."""
    if not isinstance(config, Mapping):
        raise UnsupportedArchitecture("config.json must be a JSON object")
    model_type = config.get("model_type")
    if not isinstance(model_type, str) or model_type not in FAMILIES:
        supported = ", ".join(sorted(FAMILIES))
        raise UnsupportedArchitecture(
            f"model_type={_shown(model_type)} is not supported (supported: {supported})"
        )
    if config.get("quantization_config"):
        raise UnsupportedArchitecture(
            "quantization_config: give the unquantised config and choose the weight dtype here"
        )
    path = config.get("_name_or_path")
    architecture = FAMILIES[model_type](
        config, name or (path if isinstance(path, str) and path else model_type)
    )
    if architecture.params_total > MAX_PARAMS_TOTAL:
        raise UnsupportedArchitecture(
            f"this config.json describes {architecture.params_total:.3g} parameters; the "
            f"largest model accepted has {MAX_PARAMS_TOTAL:,}"
        )
    return architecture


# A dense decoder has about 12·L·h² parameters in its layers; published models keep h/L near
# 128 (Llama-2-7B: 4096/32; Llama-3.1-70B: 8192/80 = 102).
TYPICAL_HIDDEN_PER_LAYER = 128


def architecture_from_params(
    params: int,
    *,
    num_layers: int | None = None,
    hidden_size: int | None = None,
    num_kv_heads: int | None = None,
    num_attention_heads: int | None = None,
    vocab_size: int = 32_000,
    params_active: int | None = None,
) -> ModelArchitecture:
    """A dense decoder known only by its size; the shape it assumes is listed in `notes`."""
    if params <= 0:
        raise UnsupportedArchitecture("params must be positive")
    notes = []
    if hidden_size is None and num_layers is None:
        hidden_size = round((params * TYPICAL_HIDDEN_PER_LAYER / 12) ** (1 / 3) / 128) * 128 or 128
        notes.append(f"hidden size {hidden_size} assumed from the parameter count (h/L ≈ 128)")
    if num_layers is None:
        num_layers = max(1, round(params / (12 * hidden_size**2)))
        notes.append(f"{num_layers} layers assumed from params ≈ 12·L·h²")
    if hidden_size is None:
        hidden_size = max(64, round(math.sqrt(params / (12 * num_layers)) / 64) * 64)
        notes.append(f"hidden size {hidden_size} assumed from params ≈ 12·L·h²")
    heads = num_attention_heads or max(1, hidden_size // 128)
    kv_heads = num_kv_heads or heads
    if num_kv_heads is None:
        notes.append("no KV head count given: full multi-head attention assumed (largest KV cache)")
    head_dim = hidden_size // heads
    inter = 4 * hidden_size
    return ModelArchitecture(
        name=f"{params / 1e9:.3g}B-parameter model",
        family="dense",
        params_total=params,
        params_active=params_active or params,
        params_embedding=2 * vocab_size * hidden_size,
        num_layers=num_layers,
        hidden_size=hidden_size,
        intermediate_size=inter,
        num_attention_heads=heads,
        kv_dim=kv_heads * head_dim,
        num_kv_heads=kv_heads,
        vocab_size=vocab_size,
        kv_elements_per_token=2 * num_layers * kv_heads * head_dim,
        gated_mlp=False,
        largest_layer_params=vocab_size * hidden_size,
        lora_groups=(
            LinearGroup("attention", hidden_size, hidden_size, 4 * num_layers),
            LinearGroup("mlp", hidden_size, inter, 2 * num_layers),
        ),
        notes=tuple(notes),
    )
