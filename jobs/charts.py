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
