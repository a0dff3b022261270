"""Mistral Small 3.1 / 3.2 (mistral3): a Mistral text model inside text_config, behind a
Pixtral vision tower and a projector.

Sized is the text model, which holds the weights that generate and the whole KV cache; the
vision tower and projector (under 1B parameters for Mistral Small 3.x) are not included, and
the notes say so."""

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from advisor.domain.sizing.architecture import decoder
from advisor.domain.sizing.architecture.fields import optional_text, sub_config
from advisor.domain.sizing.architecture.model import ModelArchitecture, UnsupportedArchitecture

TEXT_MODEL_TYPES = ("mistral", "llama")


def read(config: Mapping[str, Any], name: str) -> ModelArchitecture:
    text = sub_config(config, "text_config")
    text_type = optional_text(text, "model_type", "mistral")
    if text_type not in TEXT_MODEL_TYPES:
        raise UnsupportedArchitecture(
            f"text_config.model_type={text_type!r} is not supported in mistral3 "
            f"(supported: {', '.join(TEXT_MODEL_TYPES)})"
        )
    model = decoder.read({**text, "model_type": text_type}, name)
    return replace(
        model,
        family="mistral3",
        notes=(*model.notes, "text model only: the vision tower and projector are not included"),
    )
