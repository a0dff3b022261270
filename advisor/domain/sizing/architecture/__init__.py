"""Exact parameter counts and KV-cache size per token from a Hugging Face `config.json`.

Counts follow the module shapes of the `transformers` implementation of each family, so they
equal what instantiating the model reports (checked against counts taken on PyTorch's meta
device). Embeddings tied to the output head are counted once.

One reader module per family (decoder, deepseek, falcon, gpt2, bert, t5), chosen by
`model_type` in `registry.READERS`; `config_values` reads and bounds each config field
(`quantization_config_values` those of a quantization_config), `unread_fields` decides what a
config field no reader read means, `shared_shapes` holds the shapes families share, and
`from_param_count` sizes a model known only by its parameter count.
"""

from advisor.domain.sizing.architecture.config_values import FIELD_LIMITS, MAX_PARAMS_TOTAL
from advisor.domain.sizing.architecture.from_param_count import (
    TYPICAL_HIDDEN_PER_LAYER,
    architecture_from_params,
)
from advisor.domain.sizing.architecture.model import (
    LinearGroup,
    ModelArchitecture,
    UnsupportedArchitecture,
)
from advisor.domain.sizing.architecture.registry import READERS, architecture_from_config

FAMILIES = READERS  # the supported model_types, by the name callers imported before the registry

__all__ = [
    "FAMILIES",
    "FIELD_LIMITS",
    "MAX_PARAMS_TOTAL",
    "READERS",
    "TYPICAL_HIDDEN_PER_LAYER",
    "LinearGroup",
    "ModelArchitecture",
    "UnsupportedArchitecture",
    "architecture_from_config",
    "architecture_from_params",
]
