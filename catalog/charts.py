"""A price-history chart as inline SVG: this module computes the geometry, the template
charts/price_history.svg draws it (auto-escaped), and app.css colours it by class."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.template.loader import render_to_string

WIDTH, HEIGHT = 640, 200
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 16, 36


@dataclass(frozen=True)
class Tick:
    """A horizontal grid line at `y`, its price label at `label_y`."""

    y: float
    label_y: float
    label: str


@dataclass(frozen=True)
class Dot:
    """One observation, with its tooltip."""

    x: float
    y: float
    tooltip: str


def price_history_svg(
    points: Sequence[tuple[datetime, float]], *, title: str, until: datetime | None = None
) -> str:
    """A step line of USD per hour over time, held flat from the last point to `until`."""
    if not points:
        return ""
    points = sorted(points)
    times = [p[0].timestamp() for p in points]
    prices = [p[1] for p in points]
    t0 = times[0]
    t1 = max(times[-1], until.timestamp() if until else 0, t0 + 1)
    low, high = min(prices), max(prices)
    pad = (high - low) * 0.1 or high * 0.1 or 1.0
    low, high = max(0.0, low - pad), high + pad
    inner_w, inner_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(t: float) -> float:
        return round(LEFT + (t - t0) / (t1 - t0) * inner_w, 1)

    def y(price: float) -> float:
        return round(TOP + (high - price) / (high - low) * inner_h, 1)

    path = [f"M{x(times[0])},{y(prices[0])}"]
    path += [f"H{x(t)}V{y(p)}" for t, p in zip(times[1:], prices[1:], strict=True)]
    path.append(f"H{x(t1)}")
    context = {
        "width": WIDTH,
        "height": HEIGHT,
        "left": LEFT,
        "right": WIDTH - RIGHT,
        "tick_label_x": LEFT - 6,
        "date_y": HEIGHT - 10,
        "title": title,
        "ticks": [
            Tick(y(v), round(y(v) + 4, 1), f"${v:,.2f}") for v in (low, (low + high) / 2, high)
        ],
        "path": " ".join(path),
        "dots": [
            Dot(x(t), y(p), f"{datetime.fromtimestamp(t):%Y-%m-%d %H:%M}: ${p:,.4f}/h")
            for t, p in zip(times, prices, strict=True)
        ],
        "first": f"{datetime.fromtimestamp(t0):%Y-%m-%d}",
        "last": f"{datetime.fromtimestamp(t1):%Y-%m-%d}",
    }
    return render_to_string("charts/price_history.svg", context)
