"""gpt-oss: a mixture-of-experts decoder whose attention keeps a learned sink per head and
alternates sliding-window layers with global ones; its experts and router carry biases.

Parameters are counted at their logical shapes; how many bytes the MXFP4-packed experts take is
the quantised weights' reader's business, not this one's."""

from collections.abc import Mapping
from typing import Any

from advisor.domain.sizing.architecture.config_values import (
    flag,
    layer_kinds,
    optional_int,
    positive_int,
)
from advisor.domain.sizing.architecture.decoder import attention_params, head_layout
from advisor.domain.sizing.architecture.model import ModelArchitecture
from advisor.domain.sizing.architecture.shared_shapes import (
    assemble,
    attention_groups,
    embeddings,
    experts_per_token,
    gated_mlp_groups,
    max_positions,
    trunk,
)

LAYER_KINDS = frozenset({"sliding_attention", "full_attention"})
# The published config.json repeats num_experts_per_tok as experts_per_token, which
# transformers' GptOssConfig does not read (see unread_fields).
KNOWN_FIELDS = frozenset({"experts_per_token"})


def windowed_layers(config: Mapping[str, Any], layers: int) -> int:
    """Layers with a sliding window: those layer_types names, else every other one from the
    first (transformers' default)."""
    kinds = layer_kinds(config, layers, LAYER_KINDS)
    if kinds is None:
        return (layers + 1) // 2
    return kinds.count("sliding_attention")


def read(config: Mapping[str, Any], name: str) -> ModelArchitecture:
    shape = trunk(config)
    h, layers, heads = shape.hidden, shape.layers, shape.heads
    kv, head_dim = head_layout(config, h, heads)
    q_dim, kv_dim = heads * head_dim, kv * head_dim
    inter = positive_int(config, "intermediate_size")
    experts = positive_int(config, "num_local_experts")
    per_token = experts_per_token(config, experts, "num_local_experts")
    bias = flag(config, "attention_bias", True)
    attention = attention_params(h, q_dim, kv_dim, bias, bias) + heads  # + the sinks
    expert = 3 * h * inter + 2 * inter + h  # gate_up and down projections with their biases
    router = experts * h + experts
    embedding = embeddings(config, shape, False)
    outside_layers = embedding.params + h
    common = attention + router + 2 * h
    window = optional_int(config, "sliding_window", 0) or None
    return assemble(
        name,
        "gpt_oss",
        shape,
        embedding,
        params_total=outside_layers + layers * (common + experts * expert),
        params_active=outside_layers + layers * (common + per_token * expert),
        intermediate_size=inter * per_token,
        kv_dim=kv_dim,
        query_width=q_dim,
        num_kv_heads=kv,
        sliding_window=window,
        sliding_window_layers=windowed_layers(config, layers) if window else 0,
        largest_layer_params=max(embedding.input, experts * expert),
        lora_groups=attention_groups(layers, h, q_dim, kv_dim)
        + gated_mlp_groups(h, inter, layers * experts),
        params_routed_experts=layers * experts * expert,
        routed_fraction_per_token=per_token / experts,
        moe_layers=layers,
        experts_per_token=per_token,
        expert_intermediate_size=inter,
        max_positions=max_positions(config),
        notes=("attention sinks: one learned logit per head and layer",),
    )
