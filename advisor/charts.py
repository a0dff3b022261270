"""Server-side SVG charts for the sizing page: plain Python, no Django, no JavaScript.

Every function returns SVG markup as a string. Colours and sizes are SVG presentation
attributes (the page's Content Security Policy refuses inline `style`); every text placed in
the SVG is escaped with `html.escape`.
"""

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

SVG_NS = "http://www.w3.org/2000/svg"
FONT = "system-ui, -apple-system, Segoe UI, Roboto, sans-serif"
INK, MUTED, GRID, AXIS = "#1d2433", "#5f6b7a", "#e2e6ec", "#9aa4b2"
ACCENT, BAD, DOT = "#2f6fde", "#c53030", "#9aa9bd"
CHAR_WIDTH = 0.56  # average glyph width, in em, for sizing text boxes without a font

# (key in the report's memory dict, legend label, colour); in stacking order.
MEMORY_COMPONENTS: tuple[tuple[str, str, str], ...] = (
    ("weights", "Weights", "#2f6fde"),
    ("gradients", "Gradients", "#7c5cd6"),
    ("optimizer_states", "Optimizer states", "#c2569b"),
    ("activations", "Activations", "#ef8e2e"),
    ("kv_cache", "KV cache", "#1f9d8f"),
    ("logits", "Logits", "#d4b21f"),
    ("runtime_overhead", "Runtime overhead", "#7a8597"),
    ("allocator_headroom", "Allocator headroom", "#c3cad5"),
)


def _text_width(text: str, size: float) -> float:
    return len(text) * size * CHAR_WIDTH


def _num(value: float) -> str:
    """A coordinate: short, and never in exponent notation."""
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _text(x: float, y: float, text: str, *, size: float = 12, **attrs: object) -> str:
    extra = "".join(
        f' {name.rstrip("_").replace("_", "-")}="{escape(str(value))}"'
        for name, value in attrs.items()
    )
    return (
        f'<text x="{_num(x)}" y="{_num(y)}" font-size="{_num(size)}"{extra}>{escape(text)}</text>'
    )


def _open_svg(width: float, height: float, title: str, desc: str, css_class: str) -> str:
    ident = css_class.replace(" ", "-")
    return (
        f'<svg xmlns="{SVG_NS}" class="chart {escape(css_class)}" '
        f'viewBox="0 0 {_num(width)} {_num(height)}" width="{_num(width)}" '
        f'height="{_num(height)}" role="img" aria-labelledby="{ident}-title {ident}-desc" '
        f'font-family="{escape(FONT)}" fill="{INK}">'
        f'<title id="{ident}-title">{escape(title)}</title>'
        f'<desc id="{ident}-desc">{escape(desc)}</desc>'
    )


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


def _truncate(text: str, size: float, width: float) -> str:
    if _text_width(text, size) <= width:
        return text
    keep = max(int(width / (size * CHAR_WIDTH)) - 1, 1)
    return text[:keep].rstrip() + "…"


def memory_chart(
    bars: Sequence[MemoryBar], *, title: str = "Memory per GPU", width: float = 640.0
) -> str:
    """Horizontal stacked bars, one per candidate, each with a marker at its usable memory."""
    label_w, value_w, row_h, bar_h = 160.0, 134.0, 26.0, 14.0
    plot_x0, plot_x1 = label_w + 10, width - value_w
    shown = [key for key, _, _ in MEMORY_COMPONENTS if any(b.components.get(key) for b in bars)]
    legend = [(k, name, colour) for k, name, colour in MEMORY_COMPONENTS if k in shown]

    # Legend rows, wrapped to the chart's width.
    legend_items, x, y = [], 0.0, 18.0
    for _, name, colour in legend:
        item_w = 18 + _text_width(name, 12) + 22
        if x + item_w > width and x > 0:
            x, y = 0.0, y + 20
        legend_items.append(
            f'<rect x="{_num(x)}" y="{_num(y - 10)}" width="12" height="12" rx="2" '
            f'fill="{colour}"/>' + _text(x + 17, y, name, fill=MUTED)
        )
        x += item_w
    usable_x = x if x + 170 <= width else 0.0
    usable_y = y if usable_x else y + 20
    legend_items.append(
        f'<line x1="{_num(usable_x + 6)}" y1="{_num(usable_y - 12)}" x2="{_num(usable_x + 6)}" '
        f'y2="{_num(usable_y + 3)}" stroke="{INK}" stroke-width="2"/>'
        + _text(usable_x + 15, usable_y, "usable memory per GPU", fill=MUTED)
    )
    top = usable_y + 22

    rejected_at = next((i for i, bar in enumerate(bars) if not bar.fits), None)
    heading_rows = 1 if rejected_at is not None else 0
    plot_h = row_h * (len(bars) + heading_rows)
    axis_y = top + plot_h + 4
    height = axis_y + 44

    high = max([b.total_gib for b in bars] + [b.usable_gib for b in bars] + [1.0])
    ticks = linear_ticks(high * 1.02, 5)
    axis = Axis(0.0, ticks[-1], False, ticks)
    sx = axis.scale(plot_x0, plot_x1)

    parts = [
        _open_svg(
            width,
            height,
            title,
            "Stacked bars of the memory each GPU holds, by component, in GiB; a dark line marks "
            "the memory the GPU leaves usable.",
            "memory-chart",
        ),
        '<g class="legend">',
        *legend_items,
        "</g>",
        '<g class="grid">',
    ]
    for tick in axis.ticks:
        x = sx(tick)
        parts.append(
            f'<line x1="{_num(x)}" y1="{_num(top - 4)}" x2="{_num(x)}" y2="{_num(axis_y)}" '
            f'stroke="{GRID}" stroke-width="1"/>'
            + _text(x, axis_y + 16, format_number(tick), fill=MUTED, text_anchor="middle")
        )
    parts.append("</g>")
    parts.append(
        _text(
            (plot_x0 + plot_x1) / 2,
            axis_y + 36,
            "GiB per GPU",
            fill=MUTED,
            text_anchor="middle",
        )
    )

    row = 0
    for index, bar in enumerate(bars):
        if index == rejected_at:
            y_head = top + row * row_h + row_h / 2 + 4
            parts.append(
                f'<line x1="0" y1="{_num(top + row * row_h + 2)}" x2="{_num(width)}" '
                f'y2="{_num(top + row * row_h + 2)}" stroke="{GRID}" stroke-dasharray="4 3"/>'
                + _text(0, y_head, "Does not fit", size=11, fill=BAD, font_weight="600")
            )
            row += 1
        y = top + row * row_h + (row_h - bar_h) / 2
        total = bar.total_gib
        tooltip = f"{bar.label}: {total:.1f} GiB of {bar.usable_gib:.1f} GiB usable per GPU" + (
            f" — {bar.note}" if bar.note else ""
        )
        parts.append(f'<g class="bar{"" if bar.fits else " rejected"}">')
        parts.append(f"<title>{escape(tooltip)}</title>")
        parts.append(
            _text(
                label_w,
                y + bar_h - 3,
                _truncate(bar.label, 12, label_w),
                text_anchor="end",
                fill=INK if bar.fits else BAD,
            )
        )
        x = plot_x0
        for key, name, colour in legend:
            gib = bar.components.get(key, 0.0)
            if gib <= 0:
                continue
            w = sx(gib) - plot_x0
            parts.append(
                f'<rect x="{_num(x)}" y="{_num(y)}" width="{max(w, 0.5):.2f}" '
                f'height="{_num(bar_h)}" fill="{colour}">'
                f"<title>{escape(f'{name}: {gib:.2f} GiB')}</title></rect>"
            )
            x += w
        ux = sx(bar.usable_gib)
        parts.append(
            f'<line x1="{_num(ux)}" y1="{_num(y - 5)}" x2="{_num(ux)}" '
            f'y2="{_num(y + bar_h + 5)}" stroke="{INK}" stroke-width="2"/>'
        )
        value = f"{total:.1f} of {bar.usable_gib:.1f} GiB"
        parts.append(
            _text(
                plot_x1 + 8,
                y + bar_h - 3,
                value,
                size=11.5,
                fill=INK if bar.fits else BAD,
                font_weight="400" if bar.fits else "600",
            )
        )
        parts.append("</g>")
        row += 1
    parts.append("</svg>")
    return "".join(parts)


# Cost against speed -------------------------------------------------------------------------


@dataclass(frozen=True)
class Point:
    label: str
    x: float
    y: float
    note: str = ""  # tooltip detail
    recommended: bool = False


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


def _overlaps(box: tuple[float, float, float, float], boxes: list) -> bool:
    x0, y0, x1, y1 = box
    return any(x0 < b[2] and b[0] < x1 and y0 < b[3] and b[1] < y1 for b in boxes)


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
    left, right, top, bottom = 70.0, 16.0, 56.0, 50.0
    x0, x1, y0, y1 = left, width - right, height - bottom, top
    desc = f"Scatter of {y_label} against {x_label}; the Pareto frontier is joined by a line."
    parts = [_open_svg(width, height, title, desc, "cost-chart")]
    usable = [p for p in points if math.isfinite(p.x) and math.isfinite(p.y) and p.x > 0]
    if not usable:
        parts.append(
            _text(width / 2, height / 2, empty_message, size=14, fill=MUTED, text_anchor="middle")
        )
        parts.append("</svg>")
        return "".join(parts)

    # Legend, wrapped to the chart's width.
    entries = [
        (
            30,
            lambda x, y: (
                f'<line x1="{_num(x)}" y1="{_num(y)}" x2="{_num(x + 22)}" y2="{_num(y)}" '
                f'stroke="{ACCENT}" stroke-width="2"/><circle cx="{_num(x + 11)}" '
                f'cy="{_num(y)}" r="4.5" fill="{ACCENT}"/>'
            ),
            "Pareto frontier: cheapest for its speed",
        ),
        (
            16,
            lambda x, y: f'<circle cx="{_num(x + 5)}" cy="{_num(y)}" r="4" fill="{DOT}"/>',
            "other candidates",
        ),
        (
            18,
            lambda x, y: (
                f'<circle cx="{_num(x + 7)}" cy="{_num(y)}" r="6" fill="none" stroke="{INK}" '
                'stroke-width="2"/>'
            ),
            "recommended",
        ),
    ]
    parts.append('<g class="legend">')
    lx, ly = 0.0, 16.0
    for marker_w, marker, name in entries:
        item_w = marker_w + _text_width(name, 12) + 20
        if lx + item_w > width and lx > 0:
            lx, ly = 0.0, ly + 20
        parts.append(marker(lx, ly - 4) + _text(lx + marker_w, ly, name, fill=MUTED))
        lx += item_w
    parts.append("</g>")
    top = max(top, ly + 24)
    y1 = top

    x_axis = Axis.fit([p.x for p in usable])
    y_axis = Axis.fit([p.y for p in usable])
    sx, sy = x_axis.scale(x0, x1), y_axis.scale(y0, y1)
    frontier = pareto_frontier(usable, higher_x_is_better=higher_x_is_better)
    on_frontier = {id(p) for p in frontier}

    # Grid and axes.
    parts.append('<g class="grid">')
    for tick in x_axis.ticks:
        x = sx(tick)
        parts.append(
            f'<line x1="{_num(x)}" y1="{_num(y1)}" x2="{_num(x)}" y2="{_num(y0)}" '
            f'stroke="{GRID}"/>'
            + _text(x, y0 + 17, x_format(tick), fill=MUTED, text_anchor="middle")
        )
    for tick in y_axis.ticks:
        y = sy(tick)
        parts.append(
            f'<line x1="{_num(x0)}" y1="{_num(y)}" x2="{_num(x1)}" y2="{_num(y)}" '
            f'stroke="{GRID}"/>'
            + _text(x0 - 8, y + 4, y_format(tick), fill=MUTED, text_anchor="end")
        )
    parts.append("</g>")
    parts.append(
        f'<line x1="{_num(x0)}" y1="{_num(y0)}" x2="{_num(x1)}" y2="{_num(y0)}" '
        f'stroke="{AXIS}"/><line x1="{_num(x0)}" y1="{_num(y0)}" x2="{_num(x0)}" '
        f'y2="{_num(y1)}" stroke="{AXIS}"/>'
    )
    x_title = x_label + (" (log scale)" if x_axis.log else "")
    y_title = y_label + (" (log scale)" if y_axis.log else "")
    parts.append(_text((x0 + x1) / 2, height - 14, x_title, fill=INK, text_anchor="middle"))
    parts.append(
        _text(
            0,
            0,
            y_title,
            fill=INK,
            text_anchor="middle",
            transform=f"translate(16 {_num((y0 + y1) / 2)}) rotate(-90)",
        )
    )

    # Frontier line, then dots (frontier dots on top).
    if len(frontier) > 1:
        coords = " ".join(f"{_num(sx(p.x))},{_num(sy(p.y))}" for p in frontier)
        parts.append(
            f'<polyline class="frontier" points="{coords}" fill="none" stroke="{ACCENT}" '
            f'stroke-width="2" stroke-linejoin="round"/>'
        )
    ordered = sorted(usable, key=lambda p: (id(p) in on_frontier, p.recommended))
    placed: list[tuple[float, float, float, float]] = []
    for a, b in itertools.pairwise(frontier):
        # Keep labels off the frontier line: small boxes along each of its segments.
        (ax, ay), (bx, by) = (sx(a.x), sy(a.y)), (sx(b.x), sy(b.y))
        steps = max(int(math.hypot(bx - ax, by - ay) / 6), 1)
        for i in range(steps + 1):
            px, py = ax + (bx - ax) * i / steps, ay + (by - ay) * i / steps
            placed.append((px - 2, py - 2, px + 2, py + 2))
    dots = []
    for point in ordered:
        cx, cy = sx(point.x), sy(point.y)
        placed.append((cx - 5, cy - 5, cx + 5, cy + 5))
        best = id(point) in on_frontier
        tooltip = point.label + (f" — {point.note}" if point.note else "")
        ring = (
            f'<circle cx="{_num(cx)}" cy="{_num(cy)}" r="8" fill="none" stroke="{INK}" '
            'stroke-width="2"/>'
            if point.recommended
            else ""
        )
        dots.append(
            f'<g class="point{" frontier" if best else ""}"><title>{escape(tooltip)}</title>'
            f'<circle cx="{_num(cx)}" cy="{_num(cy)}" r="{4.5 if best else 4}" '
            f'fill="{ACCENT if best else DOT}" stroke="#fff" stroke-width="1"/>{ring}</g>'
        )
    parts.append('<g class="points">')
    parts.extend(dots)
    parts.append("</g>")

    # Labels: recommended first, then the frontier, then the rest, wherever one fits clear of
    # the dots and the labels already placed (the others keep their tooltip).
    rank = {id(p): i for i, p in enumerate(usable)}
    priority = sorted(
        usable, key=lambda p: (not p.recommended, id(p) not in on_frontier, rank[id(p)])
    )
    labels = []
    for point in priority:
        cx, cy = sx(point.x), sy(point.y)
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
            if box[0] < x0 or box[2] > width - 2 or box[1] < top - 6 or box[3] > y0:
                continue
            if _overlaps(box, placed):
                continue
            placed.append(box)
            best = id(point) in on_frontier or point.recommended
            labels.append(
                _text(
                    cx + dx,
                    cy + dy,
                    point.label,
                    size=size,
                    text_anchor=anchor,
                    fill=INK if best else MUTED,
                    font_weight="600" if point.recommended else "400",
                )
            )
            break
    parts.append('<g class="labels">')
    parts.extend(labels)
    parts.append("</g></svg>")
    return "".join(parts)
