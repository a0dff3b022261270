"""Scales and their ticks (linear from zero, or logarithmic over a wide span), and how an axis
writes a number."""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass


def format_number(value: float) -> str:
    """Three significant figures at most, thousands separated: 0.05, 2.5, 120, 1,500."""
    if value == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(value)))
    digits = max(0, 2 - magnitude)
    text = f"{round(value, digits):,.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def nice_step(span: float, target_ticks: int = 5) -> float:
    raw = span / max(target_ticks, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * magnitude:
            return factor * magnitude
    return 10 * magnitude


def linear_ticks(high: float, target_ticks: int = 5) -> list[float]:
    """Ticks from 0 to the first round value at or above `high`."""
    if high <= 0:
        return [0.0, 1.0]
    step = nice_step(high, target_ticks)
    count = math.ceil(high / step - 1e-9)
    return [round(step * i, 10) for i in range(count + 1)]


def log_ticks(low: float, high: float) -> list[float]:
    """Powers of ten spanning [low, high]; with 1, 2 and 5 per decade when few decades."""
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    mantissas = (1, 2, 5) if last - first <= 3 else (1,)
    ticks = [m * 10.0**e for e in range(first, last + 1) for m in mantissas]
    inside = [t for t in ticks if low <= t <= high]
    below = [t for t in ticks if t < low]
    above = [t for t in ticks if t > high]
    return ([below[-1]] if below else []) + inside + ([above[0]] if above else [])


@dataclass(frozen=True)
class Axis:
    low: float
    high: float
    log: bool
    ticks: list[float]

    @classmethod
    def fit(cls, values: Sequence[float], *, log_ratio: float = 10) -> "Axis":
        """Log scale when the values span `log_ratio` (a decade) or more."""
        low, high = min(values), max(values)
        if low > 0 and high / low >= log_ratio:
            ticks = log_ticks(low, high)
            return cls(ticks[0], ticks[-1], True, ticks)
        ticks = linear_ticks(high * 1.04 if high > 0 else 1)
        return cls(0.0, ticks[-1], False, ticks)

    def scale(self, start: float, end: float) -> Callable[[float], float]:
        if self.log:
            lo, hi = math.log10(self.low), math.log10(self.high)
            return lambda v: start + (math.log10(v) - lo) / (hi - lo) * (end - start)
        return lambda v: start + (v - self.low) / (self.high - self.low) * (end - start)
