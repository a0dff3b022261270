"""The stored weight size a checkpoint declares, beside the one computed from its config.

A Hub checkpoint's model.safetensors.index.json carries `metadata.total_size`: the bytes of
every tensor in its shards. Computed here: a quantised checkpoint's bytes as its
quantization_config stores them (ModelArchitecture.stored_weights), else total parameters x
the bytes of the config's `torch_dtype` (or `dtype`). They differ when the checkpoint holds
tensors the config does not describe (a separate LM head the config ties, multi-token-
prediction layers) or when our reading of the architecture is wrong: beyond
TOLERANCE_FRACTION the difference is said.
"""

from dataclasses import dataclass
from typing import Any

from advisor.domain.sizing.architecture import ModelArchitecture

TOLERANCE_FRACTION = 0.01
BYTES_PER_STORED_DTYPE = {
    "float32": 4,
    "float16": 2,
    "bfloat16": 2,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
}


@dataclass(frozen=True)
class WeightSizeCheck:
    stored_bytes: int
    computed_bytes: int | None  # None: the config names no dtype we know the width of
    computed_as: str | None  # how: "bfloat16 x parameters", or the quantisation method
    differs: bool  # by more than TOLERANCE_FRACTION

    @property
    def difference_fraction(self) -> float | None:
        if not self.computed_bytes:
            return None
        return (self.stored_bytes - self.computed_bytes) / self.computed_bytes

    def note(self) -> str:
        stored = f"stored weights {self.stored_bytes / 1e9:,.2f} GB (model.safetensors.index.json)"
        if self.computed_bytes is None:
            return f"{stored}; the config names no known dtype to compare with"
        computed = f"computed {self.computed_bytes / 1e9:,.2f} GB ({self.computed_as})"
        if not self.differs:
            return f"{stored}, {computed}: they agree within {TOLERANCE_FRACTION:.0%}"
        return (
            f"Warning: {stored} differ from the {computed} by "
            f"{self.difference_fraction:+.1%}: the checkpoint may hold tensors the config does not "
            "describe, or be read differently from how it is built"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "stored_bytes": self.stored_bytes,
            "computed_bytes": self.computed_bytes,
            "computed_as": self.computed_as,
            "difference_fraction": self.difference_fraction,
            "differs": self.differs,
        }


def stored_weights_compare(
    architecture: ModelArchitecture, config: dict[str, Any], stored_bytes: int
) -> WeightSizeCheck:
    if architecture.stored_weights is not None:
        computed = round(architecture.stored_weights.checkpoint_bytes)
        how = f"{architecture.stored_weights.method}, as quantization_config stores it"
    else:
        dtype = config.get("torch_dtype", config.get("dtype"))
        width = BYTES_PER_STORED_DTYPE.get(dtype) if isinstance(dtype, str) else None
        computed = architecture.params_total * width if width else None
        how = f"{dtype} x parameters" if width else None
    differs = computed is not None and abs(stored_bytes - computed) > TOLERANCE_FRACTION * computed
    return WeightSizeCheck(
        stored_bytes=stored_bytes, computed_bytes=computed, computed_as=how, differs=differs
    )
