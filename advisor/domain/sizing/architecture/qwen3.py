"""Qwen3 and Qwen3-MoE: Llama-style decoders with an explicit head_dim and RMSNorm on the
queries and keys (q_norm and k_norm: head_dim weights each per layer), no q/k/v biases unless
attention_bias. Qwen3-MoE's layers are chosen as Qwen2-MoE's (decoder_sparse_step,
mlp_only_layers), with routed experts only (no shared expert)."""

from collections.abc import Mapping
from typing import Any

from advisor.domain.sizing.architecture.config_values import flag, optional_int, positive_int
from advisor.domain.sizing.architecture.decoder import attention_params, head_layout
from advisor.domain.sizing.architecture.model import ModelArchitecture
from advisor.domain.sizing.architecture.qwen2_moe import Moe, moe_mlps, window_layers
from advisor.domain.sizing.architecture.shared_shapes import (
    assemble,
    attention_groups,
    embeddings,
    gated_mlp_groups,
    max_positions,
    trunk,
)


def read(config: Mapping[str, Any], name: str) -> ModelArchitecture:
    family = config["model_type"]
    shape = trunk(config)
    h, layers, heads = shape.hidden, shape.layers, shape.heads
    kv, head_dim = head_layout(config, h, heads)
    q_dim, kv_dim = heads * head_dim, kv * head_dim
    bias = flag(config, "attention_bias", False)
    attention = attention_params(h, q_dim, kv_dim, bias, bias) + 2 * head_dim  # q/k norms
    embedding = embeddings(config, shape, False)
    common = embedding.params + h + layers * (attention + 2 * h)
    if family == "qwen3_moe":
        moe = moe_mlps(config, shape, 0)
    else:
        inter = positive_int(config, "intermediate_size")
        dense = 3 * h * inter
        moe = Moe(0, layers, 0, 1, inter, dense, layers * dense, layers * dense)
    # Sliding-window layers, when use_sliding_window: those from max_window_layers on.
    max_window = optional_int(config, "max_window_layers", 28, minimum=0)
    window, windowed = window_layers(config, layers, max(layers - max_window, 0))
    routed = moe.moe_layers * moe.experts
    return assemble(
        name,
        family,
        shape,
        embedding,
        params_total=common + moe.total,
        params_active=common + moe.active,
        intermediate_size=moe.expert_inter * moe.per_token,
        kv_dim=kv_dim,
        query_width=q_dim,
        num_kv_heads=kv,
        sliding_window=window,
        sliding_window_layers=windowed,
        largest_layer_params=max(embedding.input, moe.experts * moe.expert),
        lora_groups=attention_groups(layers, h, q_dim, kv_dim)
        + gated_mlp_groups(h, moe.expert_inter, routed or layers),
        params_routed_experts=routed * moe.expert,
        routed_fraction_per_token=moe.per_token / moe.experts if moe.experts else 1.0,
        moe_layers=moe.moe_layers if moe.experts else 0,
        experts_per_token=moe.per_token if moe.experts else 0,
        max_positions=max_positions(config),
        notes=(
            (
                f"MoE: {moe.per_token} of {moe.experts} routed experts per token on "
                f"{moe.moe_layers} of {layers} layers",
            )
            if moe.experts
            else ()
        ),
    )
