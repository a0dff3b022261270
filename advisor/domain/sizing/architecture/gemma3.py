"""Gemma 3: the text model inside `text_config` (gemma3, with a SigLIP vision tower) or alone
(gemma3_text, the 1B).

Per layer: RMSNorms before and after attention and MLP (four of hidden size), RMSNorm on the
queries and keys (head_dim each), a gated MLP; embeddings tied. Five of every six layers
(`sliding_window_pattern`, or `layer_types`) attend within a sliding window, so past the window
their KV cache stops growing; the sixth attends to the whole context. The vision tower and the
projector are counted when vision_config gives their shapes (they hold no KV cache)."""

from collections.abc import Mapping
from typing import Any

from advisor.domain.sizing.architecture.config_values import (
    flag,
    layer_kinds,
    optional_int,
    optional_text,
    positive_int,
    sub_config,
)
from advisor.domain.sizing.architecture.decoder import attention_params, head_layout
from advisor.domain.sizing.architecture.model import ModelArchitecture, UnsupportedArchitecture
from advisor.domain.sizing.architecture.shared_shapes import (
    Trunk,
    assemble,
    attention_groups,
    embeddings,
    gated_mlp_groups,
    with_vision_tower,
)

WINDOW_KINDS = frozenset({"full_attention", "sliding_attention"})
# Gemma3TextConfig's defaults, which the published 4B/12B/27B configs rely on (no vocab_size:
# the checkpoints' 262,208-token embedding).
DEFAULT_VOCAB = 262_208
DEFAULT_HEAD_DIM = 256
DEFAULT_PATTERN = 6
DEFAULT_MAX_POSITIONS = 131_072


def _windowed_layers(config: Mapping[str, Any], layers: int) -> tuple[int | None, int]:
    window = optional_int(config, "sliding_window", 4096)
    kinds = layer_kinds(config, layers, WINDOW_KINDS)
    if kinds is not None:
        windowed = kinds.count("sliding_attention")
    else:
        pattern = optional_int(config, "sliding_window_pattern", DEFAULT_PATTERN)
        windowed = sum(1 for i in range(layers) if (i + 1) % pattern)
    return (window, windowed) if windowed else (None, 0)


def read_text(config: Mapping[str, Any], name: str, family: str) -> ModelArchitecture:
    shape = Trunk(
        positive_int(config, "hidden_size"),
        positive_int(config, "num_hidden_layers"),
        positive_int(config, "num_attention_heads"),
        positive_int(config, "vocab_size", default=DEFAULT_VOCAB),
    )
    h, layers, heads = shape.hidden, shape.layers, shape.heads
    kv, _ = head_layout(config, h, heads)
    head_dim = positive_int(config, "head_dim", default=DEFAULT_HEAD_DIM)
    q_dim, kv_dim = heads * head_dim, kv * head_dim
    bias = flag(config, "attention_bias", False)
    attention = attention_params(h, q_dim, kv_dim, bias, bias) + 2 * head_dim  # q/k norms
    inter = positive_int(config, "intermediate_size")
    embedding = embeddings(config, shape, True)
    params = embedding.params + h + layers * (attention + 4 * h + 3 * h * inter)
    window, windowed = _windowed_layers(config, layers)
    return assemble(
        name,
        family,
        shape,
        embedding,
        params_total=params,
        intermediate_size=inter,
        kv_dim=kv_dim,
        query_width=q_dim,
        num_kv_heads=kv,
        sliding_window=window,
        sliding_window_layers=windowed,
        lora_groups=attention_groups(layers, h, q_dim, kv_dim) + gated_mlp_groups(h, inter, layers),
        max_positions=optional_int(config, "max_position_embeddings", DEFAULT_MAX_POSITIONS),
        notes=(
            f"{windowed} of {layers} layers attend within a {window:,}-token sliding window "
            "(their KV cache stops growing past it); the others attend to the whole context"
            if window
            else "every layer attends to the whole context",
        ),
    )


def siglip_params(vision: Mapping[str, Any], text_hidden: int) -> int | None:
    """The SigLIP vision tower and Gemma 3's projector, or None when vision_config does not
    give their shapes (or adds the pooling head, which Gemma 3 does not use)."""
    names = ("hidden_size", "intermediate_size", "num_hidden_layers", "image_size", "patch_size")
    if any(vision.get(name) is None for name in names) or flag(vision, "vision_use_head", True):
        return None
    vh = positive_int(vision, "hidden_size")
    inter = positive_int(vision, "intermediate_size")
    layers = positive_int(vision, "num_hidden_layers")
    patch = positive_int(vision, "patch_size")
    patches = (positive_int(vision, "image_size") // patch) ** 2
    channels = optional_int(vision, "num_channels", 3)
    embeddings_params = channels * patch * patch * vh + vh + patches * vh
    layer = 4 * (vh * vh + vh) + 2 * 2 * vh + (vh * inter + inter) + (inter * vh + vh)
    projector = vh * text_hidden + vh  # mm_input_projection_weight, mm_soft_emb_norm
    return embeddings_params + layers * layer + 2 * vh + projector


def read(config: Mapping[str, Any], name: str) -> ModelArchitecture:
    if config["model_type"] == "gemma3_text":
        return read_text(config, name, "gemma3_text")
    text = sub_config(config, "text_config")
    if optional_text(text, "model_type", "gemma3_text") != "gemma3_text":
        raise UnsupportedArchitecture("gemma3: text_config.model_type must be gemma3_text")
    model = read_text(text, name, "gemma3")
    vision = (
        siglip_params(sub_config(config, "vision_config"), model.hidden_size)
        if "vision_config" in config
        else None
    )
    return with_vision_tower(model, vision, "SigLIP vision tower and projector")
