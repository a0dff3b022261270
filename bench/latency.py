"""Percentiles of measured durations, as every benchmark reports them."""

import statistics


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile (no interpolation): a value that was actually measured."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(pct / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def latency_ms(durations_s: list[float], *, digits: int, mean: bool = False) -> dict | None:
    """p50, p99 (and the mean when asked) and max in milliseconds; None when nothing was timed."""
    if not durations_s:
        return None
    summary = {
        "p50": round(percentile(durations_s, 50) * 1000, digits),
        "p99": round(percentile(durations_s, 99) * 1000, digits),
    }
    if mean:
        summary["mean"] = round(statistics.fmean(durations_s) * 1000, digits)
    summary["max"] = round(max(durations_s) * 1000, digits)
    return summary
