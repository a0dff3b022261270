"""catalog/charts.py: the price-history chart, drawn by templates/charts/price_history.svg."""

from datetime import UTC, datetime

from catalog.charts import price_history_svg
from tests.helpers import HOSTILE, SVG, assert_chart_markup


def at(day: int) -> datetime:
    return datetime(2026, 1, day, tzinfo=UTC)


def test_the_price_history_escapes_its_title_and_is_coloured_only_by_app_css_classes():
    """Fails before H6: the chart was an f-string with hex colours, returned as a plain str."""
    svg = price_history_svg([(at(3), 2.5), (at(1), 3.0)], title=HOSTILE, until=at(9))
    root = assert_chart_markup(svg)
    assert root.find(f"{SVG}title").text == HOSTILE
    assert root.get("aria-label") == HOSTILE
    line = root.find(f"{SVG}path")
    dots = root.findall(f"{SVG}circle")
    assert len(dots) == 2 and {dot.get("class") for dot in dots} == {line.get("class")}


def test_no_observation_no_chart():
    assert price_history_svg([], title="t") == ""
