"""What the cost scatter plots: its points, which of them form the Pareto frontier, their dots,
and their labels, each placed where it keeps clear of the dots, the frontier and the others."""

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from advisor.charts.geometry import Box, Label, coord, text_width


@dataclass(frozen=True)
class Point:
    label: str
    x: float
    y: float
    note: str = ""  # tooltip detail
    recommended: bool = False


@dataclass(frozen=True)
class Dot:
    """A plotted point: on the frontier or not, ringed when recommended."""

    cx: float
    cy: float
    on_frontier: bool
    recommended: bool
    tooltip: str


def pareto_frontier(points: Sequence[Point], *, higher_x_is_better: bool) -> list[Point]:
    """Points no other point beats on both axes (lower y is always better): the cheapest for
    their speed. Returned in order of x, ascending."""
    finite = [p for p in points if math.isfinite(p.x) and math.isfinite(p.y)]
    ordered = sorted(finite, key=lambda p: (-p.x if higher_x_is_better else p.x, p.y))
    frontier: list[Point] = []
    cheapest = math.inf
    for point in ordered:
        if point.y < cheapest:
            frontier.append(point)
            cheapest = point.y
    return sorted(frontier, key=lambda p: p.x)


def _overlaps(box: Box, boxes: list[Box]) -> bool:
    x0, y0, x1, y1 = box
    return any(x0 < b[2] and b[0] < x1 and y0 < b[3] and b[1] < y1 for b in boxes)


def frontier_boxes(frontier: Sequence[tuple[float, float]]) -> list[Box]:
    """Small boxes along each segment of the frontier line, so labels keep off it."""
    boxes = []
    for (ax, ay), (bx, by) in itertools.pairwise(frontier):
        steps = max(int(math.hypot(bx - ax, by - ay) / 6), 1)
        for i in range(steps + 1):
            px, py = ax + (bx - ax) * i / steps, ay + (by - ay) * i / steps
            boxes.append((px - 2, py - 2, px + 2, py + 2))
    return boxes


def scatter_dots(
    usable: Sequence[Point],
    on_frontier: set[int],
    scales: tuple[Callable[[float], float], Callable[[float], float]],
    placed: list[Box],
) -> list[Dot]:
    """A dot per point, the frontier's (and the recommended one) drawn last, on top; each dot
    joins `placed`, the spaces labels keep clear of."""
    sx, sy = scales
    dots = []
    for p in sorted(usable, key=lambda p: (id(p) in on_frontier, p.recommended)):
        cx, cy = sx(p.x), sy(p.y)
        placed.append((cx - 5, cy - 5, cx + 5, cy + 5))
        tooltip = p.label + (f" — {p.note}" if p.note else "")
        dots.append(Dot(coord(cx), coord(cy), id(p) in on_frontier, p.recommended, tooltip))
    return dots


def scatter_labels(
    priority: Sequence[tuple[Point, float, float, bool]], placed: list[Box], bounds: Box
) -> list[Label]:
    """Each point's label at the first of four places clear of the dots, the frontier and the
    labels already placed; a point with no such place keeps only its tooltip."""
    left, top, right, bottom = bounds
    labels = []
    for point, cx, cy, best in priority:
        size = 11.0
        w, h = text_width(point.label, size), size + 2
        for dx, dy, anchor in (
            (9, 4, "start"),
            (-9, 4, "end"),
            (0, -10, "middle"),
            (0, 17, "middle"),
        ):
            lx0 = cx + dx - (w if anchor == "end" else w / 2 if anchor == "middle" else 0)
            box = (lx0 - 1, cy + dy - h + 2, lx0 + w + 1, cy + dy + 2)
            if box[0] < left or box[2] > right or box[1] < top or box[3] > bottom:
                continue
            if _overlaps(box, placed):
                continue
            placed.append(box)
            labels.append(
                Label(
                    cx + dx,
                    cy + dy,
                    point.label,
                    "" if best or point.recommended else "note",
                    size,
                    anchor,
                    "600" if point.recommended else "",
                )
            )
            break
    return labels
