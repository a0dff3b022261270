"""IBM Granite 3.x, dense (granite) and mixture-of-experts (granitemoe): Llama's shapes.

Granite's embedding, attention, residual and logit multipliers are scalars in the forward pass,
not weights; granitemoe's experts (fused input_linear / output_linear, no biases) and its
bias-free router have Mixtral's shapes, so the Llama/Mixtral reader counts both exactly."""

from collections.abc import Mapping
from typing import Any

from advisor.domain.sizing.architecture import decoder
from advisor.domain.sizing.architecture.model import ModelArchitecture


def read(config: Mapping[str, Any], name: str) -> ModelArchitecture:
    return decoder.read(config, name)
