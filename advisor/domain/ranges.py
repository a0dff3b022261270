"""A figure the world varies: low / expected / high, for sizing estimates and right-sizing
projections alike."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Range:
    low: float
    expected: float
    high: float

    def scaled(self, factor: float) -> "Range":
        return Range(self.low * factor, self.expected * factor, self.high * factor)

    def plus(self, other: "Range") -> "Range":
        """Two times one after the other: lows, expecteds and highs added."""
        return Range(self.low + other.low, self.expected + other.expected, self.high + other.high)

    def slower(self, other: "Range") -> "Range":
        """Two times that overlap, the longer one bounding: the larger of each."""
        return Range(
            max(self.low, other.low),
            max(self.expected, other.expected),
            max(self.high, other.high),
        )

    def inverted(self, numerator: float) -> "Range":
        """numerator / self, with low and high swapped (a faster speed is a shorter time)."""
        return Range(numerator / self.high, numerator / self.expected, numerator / self.low)

    def as_dict(self, digits: int = 4) -> dict[str, float]:
        return {
            "low": round(self.low, digits),
            "expected": round(self.expected, digits),
            "high": round(self.high, digits),
        }
