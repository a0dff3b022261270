"""Trace-report charts as inline SVG: this module computes the geometry, the templates
charts/time_breakdown.svg and charts/series.svg draw it (auto-escaped), and app.css colours
it by class."""

from collections.abc import Sequence
from dataclasses import dataclass

from django.template.loader import render_to_string

# Share of a rank's GPU time (key in the report) -> legend text; app.css colours `share-<key>`.
LABELS = {
    "compute": "compute",
    "non_compute": "non-compute (communication, memory)",
    "idle": "idle",
}
SERIES_CLASSES = 7  # app.css defines .series-0 to .series-6; lines beyond reuse them in turn
WIDTH, LABEL_W, ROW_H, BAR_H = 680, 90, 26, 16


@dataclass(frozen=True)
class Label:
    x: float
    y: float
    text: str


@dataclass(frozen=True)
class Segment:
    """One share of a rank's bar; `label` is its percentage when the bar is wide enough."""

    x: float
    y: float
    width: float
    css_class: str
    tooltip: str
    label: Label | None


@dataclass(frozen=True)
class Swatch:
    x: float
    y: float
    css_class: str
    label: Label


@dataclass(frozen=True)
class Line:
    """A series drawn as a path; `label` (its legend) shares its class."""

    d: str
    css_class: str
    label: Label


@dataclass(frozen=True)
class Level:
    """A horizontal line at `y`: a grid line or a labelled limit."""

    y: float
    label: Label
    stroke_width: float = 1.0


def _css_class(key: str) -> str:
    return "share-" + key.replace("_", "-")


def _short(name: str, chars: int = 14) -> str:
    return name if len(name) <= chars else name[: chars - 1] + "…"


def _rank_row(rank: dict, y: int, plot_w: int) -> tuple[Label, list[Segment]]:
    # A trace that names no rank is labelled by its file (cut to the label column).
    named = rank.get("rank") is not None
    label = f"rank {rank['rank']}" if named else _short(rank.get("file") or "trace")
    segments, x = [], float(LABEL_W)
    for key, name in LABELS.items():
        share = max(float(rank.get(f"{key}_pct") or 0), 0.0)
        width = plot_w * share / 100
        text = Label(round(x + width / 2, 1), y + 12, f"{share:.0f}%") if width > 34 else None
        tooltip = f"{label}: {name} {share:.1f}%"
        segments.append(Segment(round(x, 1), y, round(width, 1), _css_class(key), tooltip, text))
        x += width
    return Label(LABEL_W - 8, y + 12, label), segments


def time_breakdown_svg(ranks: Sequence[dict]) -> str:
    """One 100% bar per rank: compute, non-compute and idle shares of its GPU time window."""
    if not ranks:
        return ""
    legend_y, legend, lx = 16, [], LABEL_W
    for key, name in LABELS.items():
        legend.append(Swatch(lx, legend_y - 10, _css_class(key), Label(lx + 17, legend_y, name)))
        lx += 40 + 7 * len(name)
    rows = [
        _rank_row(rank, 34 + index * ROW_H, WIDTH - LABEL_W - 20)
        for index, rank in enumerate(ranks)
    ]
    context = {
        "width": WIDTH,
        "height": 34 + len(ranks) * ROW_H + 8,
        "bar_height": BAR_H,
        "legend": legend,
        "rows": rows,
    }
    return render_to_string("charts/time_breakdown.svg", context)


def series_svg(
    series: Sequence[tuple[str, Sequence[tuple[float, float]]]],
    *,
    title: str,
    unit: str,
    scale: float = 1.0,
    limits: Sequence[tuple[str, float]] = (),
) -> str:
    """Lines over time (one per GPU), values divided by `scale`, with labelled horizontal
    limits (e.g. the memory capacity of the current and the recommended GPU)."""
    points = [(t, v / scale) for _, line in series for t, v in line]
    if not points:
        return ""
    width, height, left, right, top, bottom = 680, 240, 64, 150, 14, 34
    t_max = max(t for t, _ in points) or 1.0
    y_max = max([v for _, v in points] + [v / scale for _, v in limits] + [1e-9]) * 1.08
    plot_w, plot_h = width - left - right, height - top - bottom
    legend_x = left + plot_w + 8

    def x(t: float) -> float:
        return round(left + t / t_max * plot_w, 1)

    def y(v: float) -> float:
        return round(top + plot_h - v / y_max * plot_h, 1)

    grid = [
        Level(y(y_max * f), Label(left - 6, round(y(y_max * f) + 4, 1), f"{y_max * f:,.1f}"))
        for f in (0, 0.5, 1)
    ]
    lines = []
    for index, (label, line) in enumerate(series):
        css_class = f"series-{index % SERIES_CLASSES}"
        d = " ".join(
            f"{'M' if i == 0 else 'L'}{x(t)},{y(v / scale)}" for i, (t, v) in enumerate(line)
        )
        lines.append(Line(d, css_class, Label(legend_x, top + 12 + 15 * index, label)))
    levels = [
        Level(y(v / scale), Label(legend_x, round(y(v / scale) + 4, 1), label), 1.5 - 0.5 * i)
        for i, (label, v) in enumerate(limits)
    ]
    context = {
        "width": width,
        "height": height,
        "left": left,
        "right": left + plot_w,
        "top": top,
        "title": title,
        "unit": Label(left, top - 2, unit),
        "grid": grid,
        "lines": lines,
        "limits": levels,
        "times": (
            Label(left, height - 8, "0 s"),
            Label(left + plot_w, height - 8, f"{t_max:,.0f} s"),
        ),
    }
    return render_to_string("charts/series.svg", context)
