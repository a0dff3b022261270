"""The hourly replica schedule: a bar per hour of the day, the reserved base in one colour and
the replicas rented on demand above it in another, with the base as a line across."""

from collections.abc import Sequence
from dataclasses import dataclass

from django.template.loader import render_to_string

from advisor.charts.axes import linear_ticks
from advisor.charts.geometry import Label, LabelledRule, Rect, Rule, frame

# Below this width the hours are labelled every six, not every three: the labels keep 10 px.
_NARROW_WIDTH = 480


@dataclass(frozen=True)
class ScheduleLegend:
    swatches: list[Rect]
    labels: list[Label]


def _legend(width: float) -> ScheduleLegend:
    entries = (("reserved", "reserved around the clock"), ("on-demand", "rented on demand"))
    swatches, labels, x = [], [], 0.0
    for css_class, text in entries:
        swatches.append(Rect(x, 6, 12, 12, f"bar {css_class}"))
        labels.append(Label(x + 17, 16, text, "note"))
        x += 17 + len(text) * 12 * 0.56 + 18
        if x > width:
            break
    return ScheduleLegend(swatches, labels)


def schedule_chart(
    replicas_by_hour: Sequence[int],
    reserved_replicas: int,
    *,
    title: str,
    width: float = 640.0,
    height: float = 260.0,
) -> str:
    """Replicas in each hour from midnight, split into the reserved base and the rest."""
    context = frame(
        width,
        height,
        title,
        "Bars of replicas per hour of the day, from midnight; the lower part of each bar is "
        "the reserved base, the upper part is rented on demand for that hour.",
        "schedule-chart",
    )
    ticks = linear_ticks(max(replicas_by_hour), 4)
    top_value = ticks[-1]
    x0, x1, y0, y1 = 40.0, width - 8.0, height - 34.0, 50.0
    slot = (x1 - x0) / len(replicas_by_hour)

    def y_of(value: float) -> float:
        return y0 - value / top_value * (y0 - y1)

    bars = []
    for hour, count in enumerate(replicas_by_hour):
        base = min(count, reserved_replicas)
        left, bar_width = x0 + hour * slot + slot * 0.12, slot * 0.76
        tooltip = f"{hour:02d}:00: {count} replicas, {base} reserved, {count - base} on demand"
        if base:
            bars.append(Rect(left, y_of(base), bar_width, y0 - y_of(base), "bar reserved", tooltip))
        if count > base:
            bars.append(
                Rect(
                    left, y_of(count), bar_width, y_of(base) - y_of(count), "bar on-demand", tooltip
                )
            )
    every = 6 if width < _NARROW_WIDTH else 3
    hours = [
        Label(x0 + (hour + 0.5) * slot, y0 + 16, f"{hour:02d}h", "axis", 11, "middle")
        for hour in range(0, len(replicas_by_hour), every)
    ]
    grid = [
        LabelledRule(
            Rule(x0, y_of(tick), x1, y_of(tick)),
            Label(x0 - 6, y_of(tick) + 4, f"{tick:g}", "axis", 11, "end"),
        )
        for tick in ticks
    ]
    base_line = (
        Rule(x0, y_of(reserved_replicas), x1, y_of(reserved_replicas))
        if reserved_replicas
        else None
    )
    context.update(
        legend=_legend(width),
        bars=bars,
        hours=hours,
        grid=grid,
        axis=Rule(x0, y0, x1, y0),
        base_line=base_line,
        y_title=Label(x0 - 6, y1 - 12, "replicas", "note", 11),
    )
    return render_to_string("charts/schedule.svg", context)
