"""Falcon: fused QKV, multi-query (7B) or grouped (40B/180B) attention, parallel blocks."""

from collections.abc import Mapping
from typing import Any

from advisor.domain.sizing.architecture.config_values import (
    flag,
    optional_int,
    positive_int,
    split_head_dim,
)
from advisor.domain.sizing.architecture.model import ModelArchitecture, UnsupportedArchitecture
from advisor.domain.sizing.architecture.shared_shapes import (
    assemble,
    block_groups,
    embeddings,
    trunk,
)


def _kv_heads(config: Mapping[str, Any], heads: int, new_arch: bool) -> int:
    if new_arch:
        return positive_int(config, "num_kv_heads")
    return 1 if flag(config, "multi_query", True) else heads


def read(config: Mapping[str, Any], name: str) -> ModelArchitecture:
    shape = trunk(config)
    h, layers, heads = shape.hidden, shape.layers, shape.heads
    head_dim = split_head_dim(h, heads, "hidden_size", "num_attention_heads")
    new_arch = flag(config, "new_decoder_architecture", False)
    kv_heads = _kv_heads(config, heads, new_arch)
    if not flag(config, "parallel_attn", True) and not new_arch:
        raise UnsupportedArchitecture("parallel_attn=false Falcon variants are not supported")
    inter = optional_int(config, "ffn_hidden_size", 4 * h)
    bias = flag(config, "bias", False)
    qkv_out = (heads + 2 * kv_heads) * head_dim
    qkv = h * qkv_out + (bias and qkv_out)
    dense = h * h + (bias and h)
    mlp = 2 * h * inter + (bias and inter + h)
    norms_per_block = optional_int(config, "num_ln_in_parallel_attn", 2) if new_arch else 1
    per_layer = qkv + dense + mlp + norms_per_block * 2 * h
    embedding = embeddings(config, shape, True)
    return assemble(
        name,
        "falcon",
        shape,
        embedding,
        params_total=embedding.params + layers * per_layer + 2 * h,
        intermediate_size=inter,
        kv_dim=kv_heads * head_dim,
        num_kv_heads=kv_heads,
        gated_mlp=False,
        lora_groups=block_groups(
            shape,
            inter,
            (("query_key_value", qkv_out), ("dense", h)),
            ("dense_h_to_4h", "dense_4h_to_h"),
        ),
    )
