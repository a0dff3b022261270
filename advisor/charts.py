"""Sizing-page charts as inline SVG: this module computes the geometry (small dataclasses of
coordinates), the templates charts/memory.svg and charts/scatter.svg draw it (auto-escaped),
and app.css colours it by class (the page's Content Security Policy refuses inline `style`).
"""

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from django.template.loader import render_to_string

CHAR_WIDTH = 0.56  # average glyph width, in em, for sizing text boxes without a font

# (key in the report's memory dict, legend label); in stacking order. app.css colours each
# component by the class `part-<key>`, underscores as hyphens.
MEMORY_COMPONENTS: tuple[tuple[str, str], ...] = (
    ("weights", "Weights"),
    ("gradients", "Gradients"),
    ("optimizer_states", "Optimizer states"),
    ("activations", "Activations"),
    ("kv_cache", "KV cache"),
    ("logits", "Logits"),
    ("runtime_overhead", "Runtime overhead"),
    ("allocator_headroom", "Allocator headroom"),
)

Box = tuple[float, float, float, float]  # x0, y0, x1, y1 of a space a label must keep clear


def _text_width(text: str, size: float) -> float:
    return len(text) * size * CHAR_WIDTH


def _c(value: float) -> float:
    """A coordinate, to a tenth of a pixel."""
    return round(value, 1)


@dataclass
class Label:
    """A text at (x, y); `css_class` picks its colour in app.css (ink when empty)."""

    x: float
    y: float
    text: str
    css_class: str = ""
    size: float = 12
    anchor: str = "start"
    weight: str = ""  # a font-weight, when not the normal one

    def __post_init__(self) -> None:
        self.x, self.y = _c(self.x), _c(self.y)


@dataclass
class Rule:
    """A straight line from (x1, y1) to (x2, y2)."""

    x1: float
    y1: float
    x2: float
    y2: float

    def __post_init__(self) -> None:
        self.x1, self.y1, self.x2, self.y2 = map(_c, (self.x1, self.y1, self.x2, self.y2))


@dataclass(frozen=True)
class LabelledRule:
    rule: Rule
    label: Label


def _frame(width: float, height: float, title: str, desc: str, css_class: str) -> dict:
    """What charts/_sizing_frame.svg needs: size, accessible title and description."""
    return {
        "width": _c(width),
        "height": _c(height),
        "title": title,
        "desc": desc,
        "css_class": css_class,
        "ident": css_class.replace(" ", "-"),
    }


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


# Memory breakdown ---------------------------------------------------------------------------


@dataclass(frozen=True)
class MemoryBar:
    """One candidate: bytes per GPU by component, against what the GPU leaves usable."""

    label: str  # "H100 SXM × 2"
    components: dict[str, float]  # GiB per GPU, by MEMORY_COMPONENTS key
    usable_gib: float
    fits: bool
    note: str = ""  # shown in the bar's tooltip

    @property
    def total_gib(self) -> float:
        return sum(self.components.values())


@dataclass
class Rect:
    x: float
    y: float
    width: float
    height: float
    css_class: str
    tooltip: str = ""

    def __post_init__(self) -> None:
        self.x, self.y, self.width = _c(self.x), _c(self.y), round(self.width, 2)


@dataclass(frozen=True)
class MemoryRow:
    """One bar; `divider` (a dashed rule and its heading) opens the rows that do not fit."""

    fits: bool
    tooltip: str
    label: Label
    parts: list[Rect]
    usable: Rule
    value: Label
    divider: LabelledRule | None = None


def _part_class(key: str) -> str:
    return "part-" + key.replace("_", "-")


def _truncate(text: str, size: float, width: float) -> str:
    if _text_width(text, size) <= width:
        return text
    keep = max(int(width / (size * CHAR_WIDTH)) - 1, 1)
    return text[:keep].rstrip() + "…"


def _memory_legend(
    legend: Sequence[tuple[str, str]], width: float
) -> tuple[list[tuple[Rect, Label]], LabelledRule, float]:
    """Swatches wrapped to the chart's width, then the usable-memory marker; and the y where
    the bars start."""
    swatches, x, y = [], 0.0, 18.0
    for key, name in legend:
        item_w = 18 + _text_width(name, 12) + 22
        if x + item_w > width and x > 0:
            x, y = 0.0, y + 20
        swatches.append((Rect(x, y - 10, 12, 12, _part_class(key)), Label(x + 17, y, name, "note")))
        x += item_w
    usable_x = x if x + 170 <= width else 0.0
    usable_y = y if usable_x else y + 20
    marker = LabelledRule(
        Rule(usable_x + 6, usable_y - 12, usable_x + 6, usable_y + 3),
        Label(usable_x + 15, usable_y, "usable memory per GPU", "note"),
    )
    return swatches, marker, usable_y + 22


def _memory_row(
    bar: MemoryBar,
    legend: Sequence[tuple[str, str]],
    sx: Callable[[float], float],
    y: float,
    geometry: tuple[float, float, float, float],
) -> MemoryRow:
    label_w, plot_x0, plot_x1, bar_h = geometry
    total = bar.total_gib
    tooltip = f"{bar.label}: {total:.1f} GiB of {bar.usable_gib:.1f} GiB usable per GPU" + (
        f" — {bar.note}" if bar.note else ""
    )
    parts, x = [], plot_x0
    for key, name in legend:
        gib = bar.components.get(key, 0.0)
        if gib <= 0:
            continue
        w = sx(gib) - plot_x0
        parts.append(Rect(x, y, max(w, 0.5), bar_h, _part_class(key), f"{name}: {gib:.2f} GiB"))
        x += w
    ux = sx(bar.usable_gib)
    colour, weight = ("", "") if bar.fits else ("bad", "600")
    return MemoryRow(
        fits=bar.fits,
        tooltip=tooltip,
        label=Label(
            label_w, y + bar_h - 3, _truncate(bar.label, 12, label_w), colour, anchor="end"
        ),
        parts=parts,
        usable=Rule(ux, y - 5, ux, y + bar_h + 5),
        value=Label(
            plot_x1 + 8,
            y + bar_h - 3,
            f"{total:.1f} of {bar.usable_gib:.1f} GiB",
            colour,
            11.5,
            weight=weight,
        ),
    )


MEMORY_DESC = (
    "Stacked bars of the memory each GPU holds, by component, in GiB; a dark line marks the "
    "memory the GPU leaves usable."
)


def memory_chart(
    bars: Sequence[MemoryBar], *, title: str = "Memory per GPU", width: float = 640.0
) -> str:
    """Horizontal stacked bars, one per candidate, each with a marker at its usable memory."""
    label_w, value_w, row_h, bar_h = 160.0, 134.0, 26.0, 14.0
    plot_x0, plot_x1 = label_w + 10, width - value_w
    legend = [(k, name) for k, name in MEMORY_COMPONENTS if any(b.components.get(k) for b in bars)]
    swatches, usable_marker, top = _memory_legend(legend, width)

    rejected_at = next((i for i, bar in enumerate(bars) if not bar.fits), None)
    plot_h = row_h * (len(bars) + (rejected_at is not None))
    axis_y = top + plot_h + 4
    high = max([b.total_gib for b in bars] + [b.usable_gib for b in bars] + [1.0])
    ticks = linear_ticks(high * 1.02, 5)
    axis = Axis(0.0, ticks[-1], False, ticks)
    sx = axis.scale(plot_x0, plot_x1)
    grid = [
        LabelledRule(
            Rule(sx(tick), top - 4, sx(tick), axis_y),
            Label(sx(tick), axis_y + 16, format_number(tick), "axis", anchor="middle"),
        )
        for tick in axis.ticks
    ]

    rows, row = [], 0
    for index, bar in enumerate(bars):
        divider = None
        if index == rejected_at:
            line_y = top + row * row_h + 2
            heading_y = top + row * row_h + row_h / 2 + 4
            divider = LabelledRule(
                Rule(0, line_y, width, line_y),
                Label(0, heading_y, "Does not fit", "bad", 11, weight="600"),
            )
            row += 1
        y = top + row * row_h + (row_h - bar_h) / 2
        memory_row = _memory_row(bar, legend, sx, y, (label_w, plot_x0, plot_x1, bar_h))
        rows.append(replace(memory_row, divider=divider))
        row += 1
    context = {
        **_frame(width, axis_y + 44, title, MEMORY_DESC, "memory-chart"),
        "swatches": swatches,
        "usable_marker": usable_marker,
        "grid": grid,
        "axis_title": Label(
            (plot_x0 + plot_x1) / 2, axis_y + 36, "GiB per GPU", "axis", anchor="middle"
        ),
        "rows": rows,
    }
    return render_to_string("charts/memory.svg", context)


# Cost against speed -------------------------------------------------------------------------


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


@dataclass(frozen=True)
class ScatterLegend:
    """Three entries: the frontier (a line through a dot), other candidates, the ring."""

    frontier_line: Rule
    frontier_dot: tuple[float, float]
    other_dot: tuple[float, float]
    ring: tuple[float, float]
    labels: list[Label]


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


def _scatter_legend(width: float) -> tuple[ScatterLegend, float]:
    """The legend wrapped to the chart's width, and the y of its last row."""
    entries = (
        (30, "Pareto frontier: cheapest for its speed"),
        (16, "other candidates"),
        (18, "recommended"),
    )
    starts, labels, lx, ly = [], [], 0.0, 16.0
    for marker_w, name in entries:
        item_w = marker_w + _text_width(name, 12) + 20
        if lx + item_w > width and lx > 0:
            lx, ly = 0.0, ly + 20
        starts.append((lx, ly - 4))
        labels.append(Label(lx + marker_w, ly, name, "note"))
        lx += item_w
    (fx, fy), (ox, oy), (rx, ry) = starts
    legend = ScatterLegend(
        frontier_line=Rule(fx, fy, fx + 22, fy),
        frontier_dot=(_c(fx + 11), _c(fy)),
        other_dot=(_c(ox + 5), _c(oy)),
        ring=(_c(rx + 7), _c(ry)),
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


def _frontier_boxes(frontier: Sequence[tuple[float, float]]) -> list[Box]:
    """Small boxes along each segment of the frontier line, so labels keep off it."""
    boxes = []
    for (ax, ay), (bx, by) in itertools.pairwise(frontier):
        steps = max(int(math.hypot(bx - ax, by - ay) / 6), 1)
        for i in range(steps + 1):
            px, py = ax + (bx - ax) * i / steps, ay + (by - ay) * i / steps
            boxes.append((px - 2, py - 2, px + 2, py + 2))
    return boxes


def _scatter_dots(
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
        dots.append(Dot(_c(cx), _c(cy), id(p) in on_frontier, p.recommended, tooltip))
    return dots


def _scatter_labels(
    priority: Sequence[tuple[Point, float, float, bool]], placed: list[Box], bounds: Box
) -> list[Label]:
    """Each point's label at the first of four places clear of the dots, the frontier and the
    labels already placed; a point with no such place keeps only its tooltip."""
    left, top, right, bottom = bounds
    labels = []
    for point, cx, cy, best in priority:
        size = 11.0
        w, h = _text_width(point.label, size), size + 2
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
) -> str:
    """Each point a labelled dot; the Pareto frontier joined by a line. Axes go logarithmic
    when their values span a decade or more."""
    desc = f"Scatter of {y_label} against {x_label}; the Pareto frontier is joined by a line."
    context = _frame(width, height, title, desc, "cost-chart")
    usable = [p for p in points if math.isfinite(p.x) and math.isfinite(p.y) and p.x > 0]
    if not usable:
        context["empty"] = Label(width / 2, height / 2, empty_message, "note", 14, "middle")
        return render_to_string("charts/scatter.svg", context)
    legend, legend_y = _scatter_legend(width)
    top = max(56.0, legend_y + 24)
    x0, x1, y0, y1 = 70.0, width - 16.0, height - 50.0, top
    x_axis, y_axis = Axis.fit([p.x for p in usable]), Axis.fit([p.y for p in usable])
    sx, sy = x_axis.scale(x0, x1), y_axis.scale(y0, y1)
    frontier = pareto_frontier(usable, higher_x_is_better=higher_x_is_better)
    on_frontier = {id(p) for p in frontier}
    placed = _frontier_boxes([(sx(p.x), sy(p.y)) for p in frontier])
    dots = _scatter_dots(usable, on_frontier, (sx, sy), placed)
    # Labels: recommended first, then the frontier, then the rest, in the order given.
    rank = {id(p): i for i, p in enumerate(usable)}
    priority = sorted(
        usable, key=lambda p: (not p.recommended, id(p) not in on_frontier, rank[id(p)])
    )
    labels = _scatter_labels(
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
        y_title_y=_c((y0 + y1) / 2),
        frontier=" ".join(f"{_c(sx(p.x))},{_c(sy(p.y))}" for p in frontier)
        if len(frontier) > 1
        else "",
        dots=dots,
        labels=labels,
    )
    return render_to_string("charts/scatter.svg", context)
