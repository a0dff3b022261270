"""Mistral Small 3.1 / 3.2 (mistral3): a Mistral text model inside text_config, behind a
Pixtral vision tower and a projector.

The text model holds the weights that generate and the whole KV cache. The vision tower and
the projector are added when vision_config gives their shapes (Pixtral: a patch convolution,
pre-norm, and Llama-style layers without biases; the projector: a norm, a patch merger of
spatial_merge_size^2 patches, and two linears into the text model's width); otherwise the
notes say they are not included."""

from collections.abc import Mapping
from typing import Any

from advisor.domain.sizing.architecture import decoder
from advisor.domain.sizing.architecture.config_values import (
    flag,
    optional_int,
    optional_text,
    positive_int,
    sub_config,
)
from advisor.domain.sizing.architecture.model import ModelArchitecture, UnsupportedArchitecture
from advisor.domain.sizing.architecture.shared_shapes import with_vision_tower

TEXT_MODEL_TYPES = ("mistral", "llama")
PIXTRAL_PATCH_SIZE = 16


def read(config: Mapping[str, Any], name: str) -> ModelArchitecture:
    text = sub_config(config, "text_config")
    text_type = optional_text(text, "model_type", "mistral")
    if text_type not in TEXT_MODEL_TYPES:
        raise UnsupportedArchitecture(
            f"text_config.model_type={text_type!r} is not supported in mistral3 "
            f"(supported: {', '.join(TEXT_MODEL_TYPES)})"
        )
    model = decoder.read({**text, "model_type": text_type}, name)
    vision = (
        pixtral_params(config, sub_config(config, "vision_config"), model.hidden_size)
        if "vision_config" in config
        else None
    )
    return with_vision_tower(model, vision, "Pixtral vision tower and projector", family="mistral3")


def pixtral_params(
    config: Mapping[str, Any], vision: Mapping[str, Any], text_hidden: int
) -> int | None:
    """The Pixtral tower and Mistral 3's projector, or None when vision_config lacks a shape.
    Patch size and channels default as PixtralVisionConfig's do (16 and 3)."""
    names = ("hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads")
    if optional_text(vision, "model_type", "pixtral") != "pixtral" or any(
        vision.get(name) is None for name in names
    ):
        return None
    vh = positive_int(vision, "hidden_size")
    inter = positive_int(vision, "intermediate_size")
    layers = positive_int(vision, "num_hidden_layers")
    patch = optional_int(vision, "patch_size", PIXTRAL_PATCH_SIZE)
    heads = positive_int(vision, "num_attention_heads")
    q_dim = heads * optional_int(vision, "head_dim", vh // heads)
    channels = optional_int(vision, "num_channels", 3)
    layer = 2 * vh + 4 * vh * q_dim + 3 * vh * inter  # two norms, q/k/v/o, gated MLP
    tower = channels * patch * patch * vh + vh + layers * layer
    merge = optional_int(config, "spatial_merge_size", 2)
    bias = flag(config, "multimodal_projector_bias", False)
    projector = (
        vh  # norm
        + vh * merge * merge * vh  # patch merger
        + vh * text_hidden
        + text_hidden * text_hidden
        + (2 * text_hidden if bias else 0)
    )
    return tower + projector
