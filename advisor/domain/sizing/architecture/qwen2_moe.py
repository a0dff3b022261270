"""Qwen2-MoE (Qwen1.5-MoE, Qwen2-57B-A14B): Qwen2's attention (q, k and v biased) with routed
experts and one shared expert behind its own sigmoid gate; `decoder_sparse_step` and
`mlp_only_layers` choose which layers are MoE (the rest have a dense MLP).

`sparse_layers` and `Moe` are shared with Qwen3-MoE, which chooses its layers the same way."""

from collections.abc import Mapping
from typing import Any, NamedTuple

from advisor.domain.sizing.architecture.config_values import (
    flag,
    index_list,
    layer_kinds,
    optional_int,
    positive_int,
)
from advisor.domain.sizing.architecture.decoder import attention_params, head_layout
from advisor.domain.sizing.architecture.model import ModelArchitecture, UnsupportedArchitecture
from advisor.domain.sizing.architecture.shared_shapes import (
    Trunk,
    assemble,
    attention_groups,
    embeddings,
    experts_per_token,
    gated_mlp_groups,
    max_positions,
    trunk,
)

WINDOW_KINDS = frozenset({"full_attention", "sliding_attention"})


class Moe(NamedTuple):
    """The MLPs of a model whose MoE layers are a subset: per MoE layer and in all."""

    moe_layers: int
    dense_layers: int
    experts: int
    per_token: int
    expert_inter: int  # moe_intermediate_size
    expert: int  # one routed expert's parameters
    total: int  # every layer's MLP, routers and shared experts included
    active: int  # what one token uses of them


def sparse_layers(config: Mapping[str, Any], layers: int) -> int:
    """How many layers have routed experts: every `decoder_sparse_step`-th layer (counting from
    1) not listed in `mlp_only_layers`."""
    step = optional_int(config, "decoder_sparse_step", 1)
    dense = set(index_list(config, "mlp_only_layers", layers))
    return sum(1 for i in range(layers) if i not in dense and (i + 1) % step == 0)


def moe_mlps(config: Mapping[str, Any], shape: Trunk, shared_expert: int) -> Moe:
    """Routed experts (num_experts of moe_intermediate_size) plus `shared_expert` parameters on
    the MoE layers, a dense MLP of intermediate_size on the others."""
    h = shape.hidden
    experts = positive_int(config, "num_experts")
    per_token = experts_per_token(config, experts, "num_experts")
    expert_inter = positive_int(config, "moe_intermediate_size")
    expert = 3 * h * expert_inter
    moe_layers = sparse_layers(config, shape.layers)
    dense_layers = shape.layers - moe_layers
    dense = 3 * h * positive_int(config, "intermediate_size") if dense_layers else 0
    router = h * experts
    common = dense_layers * dense + moe_layers * (router + shared_expert)
    return Moe(
        moe_layers,
        dense_layers,
        experts,
        per_token,
        expert_inter,
        expert,
        total=common + moe_layers * experts * expert,
        active=common + moe_layers * per_token * expert,
    )


def window_layers(config: Mapping[str, Any], layers: int, windowed: int) -> tuple[int | None, int]:
    """(sliding window, layers using it) from layer_types, else `windowed` layers when
    use_sliding_window; (None, 0) without a window."""
    if not flag(config, "use_sliding_window", False):
        return None, 0
    window = optional_int(config, "sliding_window", 0) or None
    kinds = layer_kinds(config, layers, WINDOW_KINDS)
    if kinds is not None:
        windowed = kinds.count("sliding_attention")
    return (window, windowed) if window and windowed else (None, 0)


def read(config: Mapping[str, Any], name: str) -> ModelArchitecture:
    shape = trunk(config)
    h, layers, heads = shape.hidden, shape.layers, shape.heads
    kv, head_dim = head_layout(config, h, heads)
    q_dim, kv_dim = heads * head_dim, kv * head_dim
    qkv_bias = flag(config, "qkv_bias", True)
    attention = attention_params(h, q_dim, kv_dim, qkv_bias, False)
    shared_inter = optional_int(config, "shared_expert_intermediate_size", 0, minimum=0)
    shared = 3 * h * shared_inter + (h if shared_inter else 0)  # and its sigmoid gate
    moe = moe_mlps(config, shape, shared)
    if not moe.moe_layers:
        raise UnsupportedArchitecture("qwen2_moe: mlp_only_layers leaves no MoE layer")
    embedding = embeddings(config, shape, False)
    common = embedding.params + h + layers * (attention + 2 * h)
    max_window = optional_int(config, "max_window_layers", 28, minimum=0)
    window, windowed = window_layers(
        config, layers, sum(1 for i in range(layers) if (i + 1) % 2 and i < max_window)
    )
    inter = moe.expert_inter
    return assemble(
        name,
        "qwen2_moe",
        shape,
        embedding,
        params_total=common + moe.total,
        params_active=common + moe.active,
        intermediate_size=inter * moe.per_token + shared_inter,
        kv_dim=kv_dim,
        query_width=q_dim,
        num_kv_heads=kv,
        sliding_window=window,
        sliding_window_layers=windowed,
        largest_layer_params=max(embedding.input, moe.experts * moe.expert),
        lora_groups=attention_groups(layers, h, q_dim, kv_dim)
        + gated_mlp_groups(h, inter, moe.moe_layers * moe.experts),
        params_routed_experts=moe.moe_layers * moe.experts * moe.expert,
        routed_fraction_per_token=moe.per_token / moe.experts,
        moe_layers=moe.moe_layers,
        experts_per_token=moe.per_token,
        max_positions=max_positions(config),
        notes=(
            f"MoE: {moe.per_token} of {moe.experts} routed experts per token on "
            f"{moe.moe_layers} of {layers} layers, plus a shared expert "
            f"({shared_inter:,} wide) on each",
        ),
    )
