"""Server-side SVG for trace reports (plain Python): where each rank's GPU time went."""

from collections.abc import Sequence
from html import escape

COLOURS = {"compute": "#2f6fde", "non_compute": "#e8a33d", "idle": "#cfd6df"}
LABELS = {
    "compute": "compute",
    "non_compute": "non-compute (communication, memory)",
    "idle": "idle",
}
WIDTH, LABEL_W, ROW_H, BAR_H = 680, 90, 26, 16


def time_breakdown_svg(ranks: Sequence[dict]) -> str:
    """One 100% bar per rank: compute, non-compute and idle shares of its GPU time window."""
    if not ranks:
        return ""
    plot_w = WIDTH - LABEL_W - 20
    legend_y = 16
    rows = []
    for index, rank in enumerate(ranks):
        y = 34 + index * ROW_H
        x = LABEL_W
        label = "rank ?" if rank.get("rank") is None else f"rank {rank['rank']}"
        rows.append(
            f'<text x="{LABEL_W - 8}" y="{y + 12}" text-anchor="end" font-size="12" '
            f'fill="#1d2433">{escape(label)}</text>'
        )
        for key in ("compute", "non_compute", "idle"):
            share = max(float(rank.get(f"{key}_pct") or 0), 0.0)
            width = plot_w * share / 100
            rows.append(
                f'<rect x="{x:.1f}" y="{y}" width="{width:.1f}" height="{BAR_H}" '
                f'fill="{COLOURS[key]}"><title>{escape(label)}: {escape(LABELS[key])} '
                f"{share:.1f}%</title></rect>"
            )
            if width > 34:
                rows.append(
                    f'<text x="{x + width / 2:.1f}" y="{y + 12}" text-anchor="middle" '
                    f'font-size="11" fill="#ffffff">{share:.0f}%</text>'
                )
            x += width
    legend = []
    lx = LABEL_W
    for key in ("compute", "non_compute", "idle"):
        legend.append(
            f'<rect x="{lx}" y="{legend_y - 10}" width="12" height="12" fill="{COLOURS[key]}"/>'
            f'<text x="{lx + 17}" y="{legend_y}" font-size="12" fill="#5f6b7a">'
            f"{escape(LABELS[key])}</text>"
        )
        lx += 40 + 7 * len(LABELS[key])
    height = 34 + len(ranks) * ROW_H + 8
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" role="img" '
        'class="chart time-breakdown" aria-label="GPU time by rank: compute, non-compute, idle">'
        "<title>GPU time by rank: compute, non-compute, idle</title>"
        + "".join(legend)
        + "".join(rows)
        + "</svg>"
    )


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

    def x(t: float) -> float:
        return left + t / t_max * plot_w

    def y(v: float) -> float:
        return top + plot_h - v / y_max * plot_h

    palette = ["#2f6fde", "#e8a33d", "#1f8a4c", "#9b51e0", "#c53030", "#0ea5a4", "#6b7280"]
    parts = []
    for fraction in (0, 0.5, 1):
        value = y_max * fraction
        parts.append(
            f'<line x1="{left}" x2="{left + plot_w}" y1="{y(value):.1f}" y2="{y(value):.1f}" '
            f'stroke="#e2e6ec"/><text x="{left - 6}" y="{y(value) + 4:.1f}" text-anchor="end" '
            f'font-size="11" fill="#5f6b7a">{value:,.1f}</text>'
        )
    for index, (label, line) in enumerate(series):
        colour = palette[index % len(palette)]
        path = " ".join(
            f"{'M' if i == 0 else 'L'}{x(t):.1f},{y(v / scale):.1f}"
            for i, (t, v) in enumerate(line)
        )
        parts.append(f'<path d="{path}" fill="none" stroke="{colour}" stroke-width="1.6"/>')
        parts.append(
            f'<text x="{left + plot_w + 8}" y="{top + 12 + 15 * index}" font-size="11" '
            f'fill="{colour}">{escape(label)}</text>'
        )
    for index, (label, value) in enumerate(limits):
        level = y(value / scale)
        parts.append(
            f'<line x1="{left}" x2="{left + plot_w}" y1="{level:.1f}" y2="{level:.1f}" '
            f'stroke="#c53030" stroke-dasharray="5 3" stroke-width="{1.5 - 0.5 * index}"/>'
            f'<text x="{left + plot_w + 8}" y="{level + 4:.1f}" font-size="11" fill="#c53030">'
            f"{escape(label)}</text>"
        )
    parts.append(
        f'<text x="{left}" y="{height - 8}" font-size="11" fill="#5f6b7a">0 s</text>'
        f'<text x="{left + plot_w}" y="{height - 8}" font-size="11" fill="#5f6b7a" '
        f'text-anchor="end">{t_max:,.0f} s</text>'
        f'<text x="{left}" y="{top - 2}" font-size="11" fill="#5f6b7a">{escape(unit)}</text>'
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img" '
        f'class="chart series" aria-label="{escape(title)}"><title>{escape(title)}</title>'
        + "".join(parts)
        + "</svg>"
    )
