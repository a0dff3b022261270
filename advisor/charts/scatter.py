"""The cost scatter chart: each candidate's cost against its speed, the Pareto frontier joined
by a line, drawn in a frame of legend, grid and axis titles (points.py places the points)."""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.template.loader import render_to_string

from advisor.charts.axes import Axis, format_number
from advisor.charts.geometry import Box, Label, LabelledRule, Rule, coord, frame, text_width
from advisor.charts.points import (
    Point,
    frontier_boxes,
    pareto_frontier,
    scatter_dots,
    scatter_labels,
)


@dataclass(frozen=True)
class ScatterLegend:
    """Three entries: the frontier (a line through a dot), other candidates, the ring."""

    frontier_line: Rule
    frontier_dot: tuple[float, float]
    other_dot: tuple[float, float]
    ring: tuple[float, float]
    labels: list[Label]


def _scatter_legend(width: float, frontier_label: str) -> tuple[ScatterLegend, float]:
    """The legend wrapped to the chart's width, and the y of its last row."""
    entries = (
        (30, frontier_label),
        (16, "other candidates"),
        (18, "recommended"),
    )
    starts, labels, lx, ly = [], [], 0.0, 16.0
    for marker_w, name in entries:
        item_w = marker_w + text_width(name, 12) + 20
        if lx + item_w > width and lx > 0:
            lx, ly = 0.0, ly + 20
        starts.append((lx, ly - 4))
        labels.append(Label(lx + marker_w, ly, name, "note"))
        lx += item_w
    (fx, fy), (ox, oy), (rx, ry) = starts
    legend = ScatterLegend(
        frontier_line=Rule(fx, fy, fx + 22, fy),
        frontier_dot=(coord(fx + 11), coord(fy)),
        other_dot=(coord(ox + 5), coord(oy)),
        ring=(coord(rx + 7), coord(ry)),
        labels=labels,
    )
    return legend, ly


def _scatter_grid(
    axes: tuple[Axis, Axis],
    scales: tuple[Callable[[float], float], Callable[[float], float]],
    plot: Box,
    formats: tuple[Callable[[float], str], Callable[[float], str]],
) -> list[LabelledRule]:
    """A vertical line per x tick, a horizontal one per y tick, each with its value."""
    (x_axis, y_axis), (sx, sy), (x0, y0, x1, y1) = axes, scales, plot
    verticals = [
        LabelledRule(
            Rule(sx(t), y1, sx(t), y0),
            Label(sx(t), y0 + 17, formats[0](t), "axis", anchor="middle"),
        )
        for t in x_axis.ticks
    ]
    horizontals = [
        LabelledRule(
            Rule(x0, sy(t), x1, sy(t)),
            Label(x0 - 8, sy(t) + 4, formats[1](t), "axis", anchor="end"),
        )
        for t in y_axis.ticks
    ]
    return verticals + horizontals


def scatter_chart(
    points: Sequence[Point],
    *,
    x_label: str,
    y_label: str,
    higher_x_is_better: bool,
    title: str,
    x_format: Callable[[float], str] = format_number,
    y_format: Callable[[float], str] = format_number,
    empty_message: str = "No priced candidate to plot.",
    width: float = 640.0,
    height: float = 420.0,
    frontier_label: str = "Pareto frontier: cheapest for its speed",
    x_target: tuple[float, str] | None = None,
) -> str:
    """Each point a labelled dot; the Pareto frontier joined by a line. Axes go logarithmic
    when their values span a decade or more. `x_target` draws a vertical line at that x with
    its label (an objective the points are held to), inside the axis."""
    desc = f"Scatter of {y_label} against {x_label}; the Pareto frontier is joined by a line."
    context = frame(width, height, title, desc, "cost-chart")
    usable = [p for p in points if math.isfinite(p.x) and math.isfinite(p.y) and p.x > 0]
    if not usable:
        context["empty"] = Label(width / 2, height / 2, empty_message, "note", 14, "middle")
        return render_to_string("charts/scatter.svg", context)
    legend, legend_y = _scatter_legend(width, frontier_label)
    top = max(56.0, legend_y + 24)
    x0, x1, y0, y1 = 70.0, width - 16.0, height - 50.0, top
    xs = [p.x for p in usable] + ([x_target[0]] if x_target else [])
    x_axis, y_axis = Axis.fit(xs), Axis.fit([p.y for p in usable])
    sx, sy = x_axis.scale(x0, x1), y_axis.scale(y0, y1)
    frontier = pareto_frontier(usable, higher_x_is_better=higher_x_is_better)
    on_frontier = {id(p) for p in frontier}
    placed = frontier_boxes([(sx(p.x), sy(p.y)) for p in frontier])
    dots = scatter_dots(usable, on_frontier, (sx, sy), placed)
    # Labels: recommended first, then the frontier, then the rest, in the order given.
    rank = {id(p): i for i, p in enumerate(usable)}
    priority = sorted(
        usable, key=lambda p: (not p.recommended, id(p) not in on_frontier, rank[id(p)])
    )
    labels = scatter_labels(
        [(p, sx(p.x), sy(p.y), id(p) in on_frontier) for p in priority],
        placed,
        (x0, top - 6, width - 2, y0),
    )
    context.update(
        legend=legend,
        grid=_scatter_grid((x_axis, y_axis), (sx, sy), (x0, y0, x1, y1), (x_format, y_format)),
        axes=(Rule(x0, y0, x1, y0), Rule(x0, y0, x0, y1)),
        x_title=Label(
            (x0 + x1) / 2,
            height - 14,
            x_label + (" (log scale)" if x_axis.log else ""),
            anchor="middle",
        ),
        y_title=y_label + (" (log scale)" if y_axis.log else ""),
        y_title_y=coord((y0 + y1) / 2),
        frontier=" ".join(f"{coord(sx(p.x))},{coord(sy(p.y))}" for p in frontier)
        if len(frontier) > 1
        else "",
        dots=dots,
        labels=labels,
        target=_target(x_target, sx, (x0, y0, x1, y1)),
    )
    return render_to_string("charts/scatter.svg", context)


def _target(
    x_target: tuple[float, str] | None, sx: Callable[[float], float], plot: Box
) -> LabelledRule | None:
    """The objective's vertical line, labelled at its top, on the side with room."""
    if x_target is None:
        return None
    value, text = x_target
    x, (x0, y0, x1, y1) = sx(value), plot
    anchor = "end" if x - x0 > x1 - x else "start"
    offset = -4 if anchor == "end" else 4
    return LabelledRule(Rule(x, y0, x, y1), Label(x + offset, y1 + 12, text, "bad", 11, anchor))
