"""T5 and Flan-T5: encoder-decoder with relative position buckets, ReLU or gated MLPs."""

from collections.abc import Mapping
from typing import Any

from advisor.domain.sizing.architecture.config_values import (
    optional_int,
    optional_text,
    positive_int,
)
from advisor.domain.sizing.architecture.model import ModelArchitecture, UnsupportedArchitecture
from advisor.domain.sizing.architecture.shared_shapes import (
    Trunk,
    assemble,
    embeddings,
    layer_groups,
)

PROJECTIONS = {"relu", "gelu", "gated-gelu", "gated-relu", "gated-silu"}


def read(config: Mapping[str, Any], name: str) -> ModelArchitecture:
    d = positive_int(config, "d_model")
    d_kv = positive_int(config, "d_kv")
    heads = positive_int(config, "num_heads")
    d_ff = positive_int(config, "d_ff")
    vocab = positive_int(config, "vocab_size")
    enc_layers = positive_int(config, "num_layers")
    dec_layers = optional_int(config, "num_decoder_layers", enc_layers)
    buckets = optional_int(config, "relative_attention_num_buckets", 32, null_ok=False)
    projection = optional_text(config, "feed_forward_proj", "relu")
    if projection not in PROJECTIONS:
        raise UnsupportedArchitecture(f"feed_forward_proj={projection!r} is not supported")
    gated = projection.startswith("gated-")
    inner = heads * d_kv
    attention = 4 * d * inner
    ff = (3 if gated else 2) * d * d_ff
    encoder = enc_layers * (attention + d + ff + d) + heads * buckets + d
    decoder = dec_layers * (2 * attention + ff + 3 * d) + heads * buckets + d
    shape = Trunk(d, dec_layers, heads, vocab)  # the decoder's layers hold the KV cache
    embedding = embeddings(config, shape, True)
    return assemble(
        name,
        "t5",
        shape,
        embedding,
        params_total=embedding.params + encoder + decoder,
        intermediate_size=d_ff,
        kv_dim=inner,
        gated_mlp=gated,
        encoder_decoder=True,
        lora_groups=layer_groups(enc_layers + 2 * dec_layers, ("q", d, inner), ("v", d, inner)),
        notes=(
            "KV per generated token is the decoder self-attention cache; cross-attention adds "
            "the same per encoder token",
        ),
    )
