"""Llama, Mistral, Mixtral, Qwen2, Phi-3, Gemma, Gemma-2: pre-norm decoders with gated MLPs,
grouped-query attention, optional biases and mixture-of-experts MLPs.

What sets one of these families apart from Llama is a row in TRAITS; the pieces (`head_layout`,
`attention_params`, `gated_mlp`, `sliding_window`) are for decoder-like families' own modules.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from advisor.domain.sizing.architecture.config_values import flag, optional_int, positive_int
from advisor.domain.sizing.architecture.model import ModelArchitecture, UnsupportedArchitecture
from advisor.domain.sizing.architecture.shared_shapes import (
    Trunk,
    assemble,
    attention_groups,
    embeddings,
    experts_per_token,
    gated_mlp_groups,
    max_positions,
)


@dataclass(frozen=True)
class Traits:
    """How a family departs from Llama's layout."""

    tied_by_default: bool = False  # tie_word_embeddings when the config leaves it out
    qkv_bias: bool = False  # biases on q, k and v whatever attention_bias says
    norms_per_layer: int = 2  # RMSNorm weight vectors of hidden size per layer
    window_needs_flag: bool = False  # sliding_window counts only with use_sliding_window
    alternating_windows: bool = False  # every other layer windowed, the rest global


LLAMA = Traits()
TRAITS = {
    "gemma": Traits(tied_by_default=True),
    # Gemma-2: pre- and post-norms around both attention and MLP; local and global layers.
    "gemma2": Traits(tied_by_default=True, norms_per_layer=4, alternating_windows=True),
    "qwen2": Traits(qkv_bias=True, window_needs_flag=True),
}


class Mlp(NamedTuple):
    """One layer's MLP: a dense one, or routed experts behind a router."""

    total: int  # router included
    active: int  # what one token uses
    expert: int  # one expert (the whole MLP when dense)
    experts: int  # routed experts; 0 when dense
    per_token: int  # experts each token uses; 1 when dense


def head_layout(config: Mapping[str, Any], hidden: int, heads: int) -> tuple[int, int]:
    """(KV heads, head width): grouped-query attention over an explicit or even head width."""
    kv = positive_int(config, "num_key_value_heads", default=heads)
    if heads % kv:
        raise UnsupportedArchitecture(
            f"num_key_value_heads={kv:,} does not divide num_attention_heads={heads:,}"
        )
    if "head_dim" not in config and heads > hidden:
        raise UnsupportedArchitecture(
            f"num_attention_heads={heads:,} exceeds hidden_size={hidden:,} "
            "(and no head_dim is given)"
        )
    return kv, positive_int(config, "head_dim", default=hidden // heads)


def attention_params(
    hidden: int, q_dim: int, kv_dim: int, qkv_bias: bool, attention_bias: bool
) -> int:
    """q, k, v and o projections; attention_bias adds o's bias to q, k and v's."""
    params = hidden * q_dim + 2 * hidden * kv_dim + q_dim * hidden
    if qkv_bias:
        params += q_dim + 2 * kv_dim
    if attention_bias:
        params += hidden
    return params


def gated_mlp(config: Mapping[str, Any], hidden: int, inter: int) -> Mlp:
    """A gated MLP (optionally biased), or num_local_experts of them behind a router."""
    mlp_bias = flag(config, "mlp_bias", False)
    experts = optional_int(config, "num_local_experts", 0, minimum=0)
    expert = 3 * hidden * inter + (2 * inter + hidden if mlp_bias else 0)
    if not experts:
        return Mlp(total=expert, active=expert, expert=expert, experts=0, per_token=1)
    per_token = experts_per_token(config, experts, "num_local_experts")
    router = hidden * experts
    return Mlp(experts * expert + router, per_token * expert + router, expert, experts, per_token)


def sliding_window(
    config: Mapping[str, Any], traits: Traits, layers: int
) -> tuple[int | None, int]:
    """(sliding window in tokens, layers that use it); (None, 0) without one."""
    window = optional_int(config, "sliding_window", 0) or None
    if traits.window_needs_flag and not flag(config, "use_sliding_window", False):
        window = None
    if not window:
        return None, 0
    return window, (layers + 1) // 2 if traits.alternating_windows else layers


def read(config: Mapping[str, Any], name: str) -> ModelArchitecture:
    family = config["model_type"]
    traits = TRAITS.get(family, LLAMA)
    h = positive_int(config, "hidden_size")
    layers = positive_int(config, "num_hidden_layers")
    heads = positive_int(config, "num_attention_heads")
    kv, head_dim = head_layout(config, h, heads)
    shape = Trunk(h, layers, heads, positive_int(config, "vocab_size"))
    inter = positive_int(config, "intermediate_size")
    embedding = embeddings(config, shape, traits.tied_by_default)
    q_dim, kv_dim = heads * head_dim, kv * head_dim
    bias = flag(config, "attention_bias", False)
    attention = attention_params(h, q_dim, kv_dim, traits.qkv_bias or bias, bias)
    norms = traits.norms_per_layer * h
    mlp = gated_mlp(config, h, inter)
    outside_layers = embedding.params + h  # and the final norm
    window, windowed_layers = sliding_window(config, traits, layers)
    return assemble(
        name,
        family,
        shape,
        embedding,
        params_total=outside_layers + layers * (attention + mlp.total + norms),
        params_active=outside_layers + layers * (attention + mlp.active + norms),
        intermediate_size=inter * mlp.per_token,
        kv_dim=kv_dim,
        query_width=q_dim,
        num_kv_heads=kv,
        sliding_window=window,
        sliding_window_layers=windowed_layers,
        largest_layer_params=max(embedding.input, mlp.experts * mlp.expert),
        lora_groups=attention_groups(layers, h, q_dim, kv_dim)
        + gated_mlp_groups(h, inter, layers * max(mlp.experts, 1)),
        params_routed_experts=layers * mlp.experts * mlp.expert,
        routed_fraction_per_token=mlp.per_token / mlp.experts if mlp.experts else 1.0,
        moe_layers=layers if mlp.experts else 0,
        experts_per_token=mlp.per_token if mlp.experts else 0,
        max_positions=max_positions(config),
    )
