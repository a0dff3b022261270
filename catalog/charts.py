"""A price-history chart as server-side SVG (plain Python: no scripts, no external assets)."""

from collections.abc import Sequence
from datetime import datetime
from html import escape

WIDTH, HEIGHT = 640, 200
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 16, 36


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
        return LEFT + (t - t0) / (t1 - t0) * inner_w

    def y(price: float) -> float:
        return TOP + (high - price) / (high - low) * inner_h

    path = [f"M{x(times[0]):.1f},{y(prices[0]):.1f}"]
    for t, price in zip(times[1:], prices[1:], strict=True):
        path.append(f"H{x(t):.1f}V{y(price):.1f}")
    path.append(f"H{x(t1):.1f}")
    ticks = "".join(
        f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(v):.1f}" y2="{y(v):.1f}" '
        f'stroke="#e2e6ec"/><text x="{LEFT - 6}" y="{y(v) + 4:.1f}" text-anchor="end" '
        f'font-size="11" fill="#5f6b7a">${v:,.2f}</text>'
        for v in (low, (low + high) / 2, high)
    )
    dots = "".join(
        f'<circle cx="{x(t):.1f}" cy="{y(p):.1f}" r="3" fill="#2f6fde"><title>'
        f"{escape(datetime.fromtimestamp(t).strftime('%Y-%m-%d %H:%M'))}: ${p:,.4f}/h"
        "</title></circle>"
        for t, p in zip(times, prices, strict=True)
    )
    first = datetime.fromtimestamp(t0).strftime("%Y-%m-%d")
    last = datetime.fromtimestamp(t1).strftime("%Y-%m-%d")
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'class="chart price-history" aria-label="{escape(title)}"><title>{escape(title)}</title>'
        f"{ticks}"
        f'<path d="{" ".join(path)}" fill="none" stroke="#2f6fde" stroke-width="2"/>{dots}'
        f'<text x="{LEFT}" y="{HEIGHT - 10}" font-size="11" fill="#5f6b7a">{first}</text>'
        f'<text x="{WIDTH - RIGHT}" y="{HEIGHT - 10}" font-size="11" fill="#5f6b7a" '
        f'text-anchor="end">{last}</text></svg>'
    )
