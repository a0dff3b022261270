"""The memory chart: per candidate, a horizontal bar of what each GPU holds, stacked by
component, against a marker at the memory the GPU leaves usable; the candidates that do not
fit follow a divider."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from django.template.loader import render_to_string

from advisor.charts.axes import Axis, format_number, linear_ticks
from advisor.charts.geometry import CHAR_WIDTH, Label, LabelledRule, Rect, Rule, frame, text_width

# (key in the report's memory dict, legend label); in stacking order. app.css colours each
# component by the class `part-<key>`, underscores as hyphens.
MEMORY_COMPONENTS: tuple[tuple[str, str], ...] = (
    ("weights", "Weights"),
    ("gathered_layers", "Gathered layers"),
    ("gradients", "Gradients"),
    ("optimizer_states", "Optimizer states"),
    ("activations", "Activations"),
    ("kv_cache", "KV cache"),
    ("logits", "Logits"),
    ("runtime_overhead", "Runtime overhead"),
    ("allocator_headroom", "Allocator headroom"),
)

NARROW_CHART_WIDTH = 480.0
TICK_SPACING = 55.0  # the least room between two axis ticks, so their numbers stay apart

MEMORY_DESC = (
    "Stacked bars of the memory each GPU holds, by component, in GiB; a dark line marks the "
    "memory the GPU leaves usable."
)


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
    if text_width(text, size) <= width:
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
        item_w = 18 + text_width(name, 12) + 22
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
    compact: bool = False,
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
            f"{total:.1f} / {bar.usable_gib:.1f}"
            if compact
            else f"{total:.1f} of {bar.usable_gib:.1f} GiB",
            colour,
            11.5,
            weight=weight,
        ),
    )


def memory_chart(
    bars: Sequence[MemoryBar], *, title: str = "Memory per GPU", width: float = 640.0
) -> str:
    """Horizontal stacked bars, one per candidate, each with a marker at its usable memory."""
    # On a narrow chart (a phone's) the labels take less room and the values drop their unit
    # (the axis says GiB), so the bars keep a third of the width.
    compact = width < NARROW_CHART_WIDTH
    label_w, value_w = (110.0, 84.0) if compact else (160.0, 134.0)
    row_h, bar_h = 26.0, 14.0
    plot_x0, plot_x1 = label_w + 10, width - value_w
    legend = [(k, name) for k, name in MEMORY_COMPONENTS if any(b.components.get(k) for b in bars)]
    swatches, usable_marker, top = _memory_legend(legend, width)

    rejected_at = next((i for i, bar in enumerate(bars) if not bar.fits), None)
    plot_h = row_h * (len(bars) + (rejected_at is not None))
    axis_y = top + plot_h + 4
    high = max([b.total_gib for b in bars] + [b.usable_gib for b in bars] + [1.0])
    ticks = linear_ticks(high * 1.02, max(2, min(5, int((plot_x1 - plot_x0) / TICK_SPACING))))
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
        memory_row = _memory_row(bar, legend, sx, y, (label_w, plot_x0, plot_x1, bar_h), compact)
        rows.append(replace(memory_row, divider=divider))
        row += 1
    context = {
        **frame(width, axis_y + 44, title, MEMORY_DESC, "memory-chart"),
        "swatches": swatches,
        "usable_marker": usable_marker,
        "grid": grid,
        "axis_title": Label(
            (plot_x0 + plot_x1) / 2,
            axis_y + 36,
            "GiB per GPU (used / usable)" if compact else "GiB per GPU",
            "axis",
            anchor="middle",
        ),
        "rows": rows,
    }
    return render_to_string("charts/memory.svg", context)
