"""Cohere-2 (Command R7B): a parallel block (attention and MLP read the same LayerNorm, one per
layer, without bias), embeddings tied to the head by default, and three sliding-window layers in
every four (sliding_window_pattern), the fourth global."""

from collections.abc import Mapping
from typing import Any

from advisor.domain.sizing.architecture.config_values import (
    flag,
    layer_kinds,
    optional_int,
    positive_int,
)
from advisor.domain.sizing.architecture.decoder import attention_params, head_layout
from advisor.domain.sizing.architecture.gpt_oss import LAYER_KINDS
from advisor.domain.sizing.architecture.model import ModelArchitecture
from advisor.domain.sizing.architecture.shared_shapes import (
    assemble,
    attention_groups,
    embeddings,
    gated_mlp_groups,
    max_positions,
    trunk,
)


def windowed_layers(config: Mapping[str, Any], layers: int) -> int:
    """layer_types' sliding layers, else all but every sliding_window_pattern-th (default 4)."""
    kinds = layer_kinds(config, layers, LAYER_KINDS)
    if kinds is not None:
        return kinds.count("sliding_attention")
    return layers - layers // optional_int(config, "sliding_window_pattern", 4)


def read(config: Mapping[str, Any], name: str) -> ModelArchitecture:
    shape = trunk(config)
    h, layers, heads = shape.hidden, shape.layers, shape.heads
    kv, head_dim = head_layout(config, h, heads)
    q_dim, kv_dim = heads * head_dim, kv * head_dim
    inter = positive_int(config, "intermediate_size")
    bias = flag(config, "attention_bias", False)
    attention = attention_params(h, q_dim, kv_dim, bias, bias)
    mlp = 3 * h * inter
    embedding = embeddings(config, shape, True)
    window = optional_int(config, "sliding_window", 0) or None
    return assemble(
        name,
        "cohere2",
        shape,
        embedding,
        params_total=embedding.params + h + layers * (attention + mlp + h),
        intermediate_size=inter,
        kv_dim=kv_dim,
        query_width=q_dim,
        num_kv_heads=kv,
        sliding_window=window,
        sliding_window_layers=windowed_layers(config, layers) if window else 0,
        lora_groups=attention_groups(layers, h, q_dim, kv_dim) + gated_mlp_groups(h, inter, layers),
        max_positions=max_positions(config),
    )
