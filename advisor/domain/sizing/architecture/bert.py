"""BERT as `AutoModel` loads it (BertModel with pooler, no task head): encoder only."""

from collections.abc import Mapping
from typing import Any

from advisor.domain.sizing.architecture.config_values import (
    optional_int,
    positive_int,
    split_head_dim,
)
from advisor.domain.sizing.architecture.model import ModelArchitecture
from advisor.domain.sizing.architecture.shared_shapes import (
    Embeddings,
    assemble,
    block_groups,
    trunk,
)


def read(config: Mapping[str, Any], name: str) -> ModelArchitecture:
    shape = trunk(config)
    h, layers = shape.hidden, shape.layers
    inter = positive_int(config, "intermediate_size")
    positions = positive_int(config, "max_position_embeddings")
    split_head_dim(h, shape.heads, "hidden_size", "num_attention_heads")
    token_types = optional_int(config, "type_vocab_size", 2, minimum=0, null_ok=False)
    per_layer = 4 * (h * h + h) + 2 * h + (h * inter + inter) + (inter * h + h) + 2 * h
    embedding = Embeddings(shape.vocab * h, head=0)  # AutoModel loads no output head
    total = (
        embedding.params + positions * h + token_types * h + 2 * h + layers * per_layer + h * h + h
    )
    return assemble(
        name,
        "bert",
        shape,
        embedding,
        params_total=total,
        intermediate_size=inter,
        kv_dim=h,
        kv_elements_per_token=0,
        gated_mlp=False,
        encoder_only=True,
        max_positions=positions,
        absolute_positions=True,
        lora_groups=block_groups(
            shape,
            inter,
            tuple(
                (projection, h)
                for projection in ("query", "key", "value", "attention.output.dense")
            ),
            ("intermediate.dense", "output.dense"),
        ),
        notes=("encoder-only: no KV cache",),
    )
