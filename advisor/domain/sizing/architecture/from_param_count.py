"""A dense decoder known only by its parameter count (and whatever of its shape is given).

What is not given is derived from the count (params ≈ 12·layers·hidden², the layers of a dense
decoder) and listed in `notes`, each with what it was derived from. A shape that cannot be the
given count, or a derived one no published model has, is refused rather than sized.
"""

import math

from advisor.domain.sizing.architecture.config_values import FIELD_LIMITS
from advisor.domain.sizing.architecture.model import (
    LinearGroup,
    ModelArchitecture,
    UnsupportedArchitecture,
)

# A dense decoder has about 12·L·h² parameters in its layers; published models keep h/L near
# 128 (Llama-2-7B: 4096/32; Llama-3.1-70B: 8192/80 = 102).
TYPICAL_HIDDEN_PER_LAYER = 128
# A derived width or depth must give a shape published models have: hidden / layers from 16
# (MobileLLM-125M: 576/30 = 19) to 512 (Falcon-180B: 14848/80 = 186), generously.
HIDDEN_PER_LAYER_RANGE = (16, 512)
# params / (12·L·h²): embeddings push it up for small models with large vocabularies (Gemma-3
# 270M: 3.0) and a mixture of experts counted as dense further (Mixtral 8x7B: 7.3); layers
# alone cannot hold much more than the total (Falcon-7B, multi-query: 0.87).
PARAMS_PER_12LH2_RANGE = (1 / 3, 8)
HEAD_WIDTH = 128
DEFAULT_VOCAB_SIZE = 32_000


def _check_derived_shape(params: int, layers: int, hidden: int, derived: str) -> None:
    low, high = HIDDEN_PER_LAYER_RANGE
    if layers > FIELD_LIMITS["num_layers"] or not low <= hidden / layers <= high:
        raise UnsupportedArchitecture(
            f"params={params:,} with {derived} gives {layers:,} layers of hidden size "
            f"{hidden:,} (params ≈ 12·layers·hidden²): no dense decoder has that shape "
            f"(hidden/layers {hidden / layers:.3g}; published models keep {low}-{high}); "
            "give both num_layers and hidden_size, or neither"
        )


def _check_consistent(params: int, layers: int, hidden: int) -> None:
    in_layers = 12 * layers * hidden**2
    low, high = PARAMS_PER_12LH2_RANGE
    if not low <= params / in_layers <= high:
        raise UnsupportedArchitecture(
            f"num_layers={layers:,} and hidden_size={hidden:,} make about {in_layers:.3g} "
            f"parameters in the layers (12·layers·hidden²), not near params={params:.3g} "
            f"(within {1 / low:.0f}x below to {high:.0f}x above): check the three numbers "
            "(for a larger mixture of experts, give its config.json)"
        )


def _heads(hidden: int) -> int:
    """Heads of HEAD_WIDTH where they divide the hidden size; else of 64; else one head."""
    for width in (HEAD_WIDTH, 64):
        if hidden % width == 0:
            return hidden // width
    return 1


def architecture_from_params(
    params: int,
    *,
    num_layers: int | None = None,
    hidden_size: int | None = None,
    num_kv_heads: int | None = None,
    num_attention_heads: int | None = None,
    vocab_size: int = DEFAULT_VOCAB_SIZE,
    params_active: int | None = None,
) -> ModelArchitecture:
    """A dense decoder known only by its size; the shape it assumes is listed in `notes`."""
    if params <= 0:
        raise UnsupportedArchitecture("params must be positive")
    notes = []
    if hidden_size is None and num_layers is None:
        hidden_size = round((params * TYPICAL_HIDDEN_PER_LAYER / 12) ** (1 / 3) / 128) * 128 or 128
        notes.append(
            f"hidden size {hidden_size:,} derived from params={params:,} (hidden/layers ≈ "
            f"{TYPICAL_HIDDEN_PER_LAYER}, as published models keep it)"
        )
    if num_layers is None:
        num_layers = max(1, round(params / (12 * hidden_size**2)))
        _check_derived_shape(params, num_layers, hidden_size, f"hidden_size={hidden_size:,}")
        notes.append(
            f"{num_layers:,} layers derived from params={params:,} and hidden size "
            f"{hidden_size:,} (params ≈ 12·layers·hidden²)"
        )
    elif hidden_size is None:
        hidden_size = max(64, round(math.sqrt(params / (12 * num_layers)) / 64) * 64)
        _check_derived_shape(params, num_layers, hidden_size, f"num_layers={num_layers:,}")
        notes.append(
            f"hidden size {hidden_size:,} derived from params={params:,} and {num_layers:,} "
            "layers (params ≈ 12·layers·hidden²)"
        )
    else:
        _check_consistent(params, num_layers, hidden_size)
    heads = num_attention_heads or _heads(hidden_size)
    if num_attention_heads is None:
        notes.append(
            f"{heads} attention heads of width {hidden_size // heads} derived from hidden size "
            f"{hidden_size:,}"
        )
    if num_kv_heads is not None and heads % num_kv_heads:
        raise UnsupportedArchitecture(
            f"num_kv_heads={num_kv_heads:,} does not divide the {heads:,} attention heads "
            "(each KV head serves a whole group of query heads)"
        )
    kv_heads = num_kv_heads or heads
    if num_kv_heads is None:
        notes.append("no KV head count given: full multi-head attention assumed (largest KV cache)")
    head_dim = hidden_size // heads
    inter = 4 * hidden_size
    notes.append(
        f"vocabulary of {vocab_size:,} tokens (untied embeddings, kept 16-bit when the weights "
        "are quantised) and an MLP of 4 x hidden size assumed"
    )
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
