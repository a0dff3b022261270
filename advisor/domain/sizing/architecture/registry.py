"""Which reader counts which `model_type`, and what every config goes through first and last.

A family is one module with a `read(config, name)` function and one line in READERS; a
model_type not listed is refused by name, with the list of those that are."""

import dataclasses
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from advisor.domain.sizing.architecture import (
    bert,
    cohere2,
    decoder,
    deepseek,
    falcon,
    gemma3,
    glm4_moe,
    gpt2,
    gpt_oss,
    granite,
    llama4,
    mistral3,
    olmo2,
    qwen2_moe,
    qwen3,
    t5,
)
from advisor.domain.sizing.architecture.config_values import MAX_PARAMS_TOTAL, shown
from advisor.domain.sizing.architecture.model import ModelArchitecture, UnsupportedArchitecture
from advisor.domain.sizing.architecture.quantization import with_stored_weights
from advisor.domain.sizing.architecture.unread_fields import (
    ReadRecorder,
    declared_fields,
    ignored_fields_note,
    unknown_fields_check,
)

Reader = Callable[[Mapping[str, Any], str], ModelArchitecture]

READERS: dict[str, Reader] = {
    "llama": decoder.read,
    "mistral": decoder.read,
    "mixtral": decoder.read,
    "qwen2": decoder.read,
    "phi3": decoder.read,
    "gemma": decoder.read,
    "gemma2": decoder.read,
    "gemma3": gemma3.read,
    "gemma3_text": gemma3.read,
    "qwen3": qwen3.read,
    "qwen3_moe": qwen3.read,
    "qwen2_moe": qwen2_moe.read,
    "llama4": llama4.read,
    "llama4_text": llama4.read,
    "deepseek_v2": deepseek.read,
    "deepseek_v3": deepseek.read,
    "kimi_k2": deepseek.read,
    "gpt_oss": gpt_oss.read,
    "olmo2": olmo2.read,
    "mistral3": mistral3.read,
    "glm4_moe": glm4_moe.read,
    "granite": granite.read,
    "granitemoe": granite.read,
    "cohere2": cohere2.read,
    "falcon": falcon.read,
    "gpt2": gpt2.read,
    "bert": bert.read,
    "t5": t5.read,
}


def architecture_from_config(config: Mapping[str, Any], name: str = "") -> ModelArchitecture:
    """Count parameters exactly from a Hugging Face config; refuse what we cannot count.

    Every refusal is UnsupportedArchitecture naming the field: a missing field, a value of the
    wrong JSON type, or one outside FIELD_LIMITS."""
    if not isinstance(config, Mapping):
        raise UnsupportedArchitecture("config.json must be a JSON object")
    model_type = config.get("model_type")
    if not isinstance(model_type, str) or model_type not in READERS:
        supported = ", ".join(sorted(READERS))
        raise UnsupportedArchitecture(
            f"model_type={shown(model_type)} is not supported (supported: {supported})"
        )
    path = config.get("_name_or_path")
    reader = READERS[model_type]
    recorded = ReadRecorder(config)
    architecture = reader(
        recorded, name or (path if isinstance(path, str) and path else model_type)
    )
    ignored = unknown_fields_check(recorded, model_type, declared_fields(inspect.getmodule(reader)))
    if ignored:
        notes = (*architecture.notes, ignored_fields_note(model_type, ignored))
        architecture = dataclasses.replace(architecture, notes=notes)
    if architecture.params_total > MAX_PARAMS_TOTAL:
        raise UnsupportedArchitecture(
            f"this config.json describes {architecture.params_total:.3g} parameters; the "
            f"largest model accepted has {MAX_PARAMS_TOTAL:,}"
        )
    return with_stored_weights(config, architecture, reader)
