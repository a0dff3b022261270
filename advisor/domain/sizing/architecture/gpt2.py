"""GPT-2: learned absolute positions, fused c_attn, biases everywhere, a 4h MLP by default."""

from collections.abc import Mapping
from typing import Any

from advisor.domain.sizing.architecture.config_values import (
    optional_int,
    positive_int,
    split_head_dim,
)
from advisor.domain.sizing.architecture.model import ModelArchitecture
from advisor.domain.sizing.architecture.shared_shapes import (
    assemble,
    block_groups,
    embeddings,
    trunk,
)


def read(config: Mapping[str, Any], name: str) -> ModelArchitecture:
    shape = trunk(
        config,
        ("n_embd", "hidden_size"),
        ("n_layer", "num_hidden_layers"),
        ("n_head", "num_attention_heads"),
    )
    h, layers = shape.hidden, shape.layers
    positions = positive_int(config, "n_positions", "max_position_embeddings")
    split_head_dim(h, shape.heads, "n_embd", "n_head")
    inter = optional_int(config, "n_inner", 4 * h)
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
    embedding = embeddings(config, shape, True)
    return assemble(
        name,
        "gpt2",
        shape,
        embedding,
        params_total=embedding.params + positions * h + layers * per_layer + 2 * h,
        intermediate_size=inter,
        kv_dim=h,
        max_positions=positions,
        absolute_positions=True,
        gated_mlp=False,
        lora_groups=block_groups(
            shape, inter, (("c_attn", 3 * h), ("c_proj", h)), ("c_fc", "mlp.c_proj")
        ),
    )
