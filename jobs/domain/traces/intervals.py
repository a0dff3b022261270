"""Unions and overlaps of [start, end) time intervals, merged the way HTA merges them."""

from collections.abc import Iterable, Sequence

Interval = tuple[float, float]


def merge(intervals: Iterable[Interval]) -> list[Interval]:
    """Merge overlapping or touching intervals, as HTA's merge_kernel_intervals does.

    Sorted by start, a row opens a new group only when it starts after every earlier end; each
    group spans its earliest start to its latest end. With HTA's ns rounding a sub-2-us event can
    end before it starts; such a group then counts negative, as it does in HTA.
    """
    merged: list[list[float]] = []
    latest_end = float("-inf")
    for start, end in sorted(intervals):
        if merged and start <= latest_end:
            group = merged[-1]
            if end > group[1]:
                group[1] = end
        else:
            merged.append([start, end])
        if end > latest_end:
            latest_end = end
    return [(start, end) for start, end in merged]


def total_length(merged: Sequence[Interval]) -> float:
    return sum(end - start for start, end in merged)


def overlap_length(left: Sequence[Interval], right: Sequence[Interval]) -> float:
    """Time covered by both of two merged (sorted, disjoint) interval lists."""
    total = 0.0
    i = j = 0
    while i < len(left) and j < len(right):
        start = max(left[i][0], right[j][0])
        end = min(left[i][1], right[j][1])
        if end > start:
            total += end - start
        if left[i][1] < right[j][1]:
            i += 1
        else:
            j += 1
    return total
