"""The typed reading of quantization_config fields, the config_values.py way: a missing field, a
value of the wrong JSON type or one outside QUANTIZATION_LIMITS is an UnsupportedArchitecture
naming `quantization_config.<field>`."""

from collections.abc import Mapping
from typing import Any

from advisor.domain.sizing.architecture.config_values import shown
from advisor.domain.sizing.architecture.model import UnsupportedArchitecture

# Generous limits for the counts a quantization_config holds.
QUANTIZATION_LIMITS: dict[str, int] = {
    "bits": 16,
    "w_bit": 16,
    "num_bits": 16,
    "group_size": 1_048_576,
    "q_group_size": 1_048_576,
    "weight_block_size": 1_048_576,
    "block_structure": 1_048_576,
    "num_nextn_predict_layers": 1_000,
}


def where(name: str) -> str:
    return f"quantization_config.{name}"


def count(
    settings: Mapping[str, Any], *names: str, default: int | None = None, minimum: int = 1
) -> int:
    """The first of `names` set (not null) as a whole number from `minimum` to its limit."""
    for name in names:
        value = settings.get(name)
        if value is None:
            continue
        maximum = QUANTIZATION_LIMITS[name]
        if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
            raise UnsupportedArchitecture(
                f"{where(name)} must be a whole number from {minimum:,} to {maximum:,}, "
                f"got {shown(value)}"
            )
        return value
    if default is None:
        raise UnsupportedArchitecture(f"{where(' / '.join(names))} is missing")
    return default


def group_size(settings: Mapping[str, Any], *names: str, default: int) -> int:
    """A group size: -1 (one group per output row) or a positive count."""
    size = count(settings, *names, default=default, minimum=-1)
    if size == 0:
        raise UnsupportedArchitecture(f"{where(names[0])} must be -1 or a positive count, got 0")
    return size


def flag(settings: Mapping[str, Any], name: str, default: bool) -> bool:
    value = settings.get(name)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise UnsupportedArchitecture(f"{where(name)} must be true or false, got {shown(value)}")
    return value


def text(settings: Mapping[str, Any], name: str, default: str) -> str:
    value = settings.get(name)
    if value is None:
        return default
    if not isinstance(value, str):
        raise UnsupportedArchitecture(f"{where(name)} must be a string, got {shown(value)}")
    return value


def names(settings: Mapping[str, Any], name: str) -> tuple[str, ...]:
    value = settings.get(name)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise UnsupportedArchitecture(
            f"{where(name)} must be a list of module names, got {shown(value)}"
        )
    return tuple(value)


def block(settings: Mapping[str, Any], name: str) -> int | None:
    """Values per block of a [rows, columns] block shape; None when not set."""
    value = settings.get(name)
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != 2:
        raise UnsupportedArchitecture(f"{where(name)} must be [rows, columns], got {shown(value)}")
    rows, columns = (count({name: side}, name) for side in value)
    return rows * columns
