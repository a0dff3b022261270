"""Discrete laws for the queueing model (queueing.py): a Poisson count over the counts that hold
nearly all of it, the same law in a few runs of equal probability, and a weighted quantile."""

import math

_POISSON_TAIL = 1e-9
_SMALL_POISSON_MEAN = 30.0


def poisson(mean: float, tail: float = _POISSON_TAIL) -> list[tuple[int, float]]:
    """(count, probability) of a Poisson count, over the counts that hold all but about `tail`
    of it: from zero for a small mean, else a window around the mean (logarithms, so that a
    large mean does not underflow)."""
    if mean < _SMALL_POISSON_MEAN:
        probability = math.exp(-mean)
        counts = [(0, probability)]
        left = 1.0 - probability
        while left > tail and probability > 0.0:
            count = len(counts)
            probability *= mean / count
            counts.append((count, probability))
            left -= probability
        return counts
    spread = math.sqrt(-2 * math.log(tail)) * math.sqrt(mean) + 2
    lowest, highest = max(0, math.floor(mean - spread)), math.ceil(mean + spread)
    return [
        (count, math.exp(count * math.log(mean) - mean - math.lgamma(count + 1)))
        for count in range(lowest, highest + 1)
    ]


def coarse(counts: list[tuple[int, float]], points: int) -> list[tuple[int, float]]:
    """A count's law in at most about `points` runs of equal probability, each at its mean
    count: the tails a p95 reads keep their mass, at a fraction of the terms."""
    if len(counts) <= points:
        return counts
    step = sum(probability for _, probability in counts) / points
    runs, mass, weighted = [], 0.0, 0.0
    for count, probability in counts:
        mass += probability
        weighted += count * probability
        if mass >= step:
            runs.append((round(weighted / mass), mass))
            mass = weighted = 0.0
    if mass > 0:
        runs.append((round(weighted / mass), mass))
    return runs


def weighted_quantile(values_and_weights: list[tuple[float, float]], quantile: float) -> float:
    """The smallest value with at least `quantile` of the weight at or below it."""
    ordered = sorted(values_and_weights)
    total = sum(weight for _, weight in ordered)
    running = 0.0
    for value, weight in ordered:
        running += weight
        if running >= quantile * total:
            return value
    return ordered[-1][0]
