"""jobs/charts.py: the trace report's charts, drawn by templates/charts/time_breakdown.svg and
templates/charts/series.svg."""

from jobs.charts import series_svg, time_breakdown_svg
from tests.helpers import HOSTILE, SVG, assert_chart_markup

SHARES = ["share-compute", "share-non-compute", "share-idle"]


def test_the_time_breakdown_escapes_rank_labels_and_its_legend_shares_the_bars_classes():
    """Fails before H6: shares were coloured by hex presentation attributes from a dict."""
    svg = time_breakdown_svg(
        [
            {"rank": HOSTILE, "compute_pct": 60, "non_compute_pct": 30, "idle_pct": 10},
            {"rank": None, "compute_pct": 5, "non_compute_pct": None, "idle_pct": 95},
        ]
    )
    root = assert_chart_markup(svg, hostile=f"rank {HOSTILE}")
    rects = root.findall(f"{SVG}rect")
    swatches = [r.get("class") for r in rects if r.find(f"{SVG}title") is None]
    segments = [r.get("class") for r in rects if r.find(f"{SVG}title") is not None]
    assert swatches == SHARES and segments == SHARES * 2
    assert any(r.find(f"{SVG}title").text == f"rank {HOSTILE}: compute 60.0%" for r in rects[3:])


def test_a_series_chart_escapes_its_texts_and_each_line_shares_its_legend_class():
    """Fails before H6: line colours came from a palette list in Python."""
    lines = [
        (HOSTILE if i == 0 else f"GPU {i}", [(0.0, i + 1.0), (5.0, i + 2.0)]) for i in range(9)
    ]
    svg = series_svg(lines, title=HOSTILE, unit=HOSTILE, limits=[(HOSTILE, 20.0)])
    root = assert_chart_markup(svg)
    paths = [p.get("class") for p in root.findall(f"{SVG}path")]
    legend = [t for t in root.findall(f"{SVG}text") if "series" in t.get("class", "").split()]
    assert paths == [t.get("class") for t in legend]
    assert legend[0].text == HOSTILE
    assert paths[7] == paths[0] and paths[8] == paths[1]  # seven colours, then again in turn
    limit_label = next(t for t in root.findall(f"{SVG}text") if t.get("class") == "bad")
    assert limit_label.text == HOSTILE
    assert sum(t.text == HOSTILE for t in root.findall(f"{SVG}text")) == 3  # line, limit, unit


def test_no_data_no_chart():
    assert time_breakdown_svg([]) == ""
    assert series_svg([("GPU 0", [])], title="t", unit="%") == ""
