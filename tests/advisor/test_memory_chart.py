"""The sizing page's memory chart: each GPU type at the count the answer recommends for it (its
first configuration, or the fewest GPUs of that type at the same bill), and a narrow version
for a phone whose axis numbers and values stay apart."""

import itertools
import re
import xml.etree.ElementTree as ET

import pytest
from django.test import Client

from advisor import charts
from advisor.charts.geometry import text_width
from advisor.presenters import recommended_per_gpu_type

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def client(catalog) -> Client:
    return Client()


def priced(gpu: str, count: int, usd_per_job: float) -> dict:
    return {"gpu": gpu, "gpu_count": count, "fits": True, "usd_per_job": {"expected": usd_per_job}}


def test_the_memory_chart_takes_each_gpu_type_at_its_recommended_count():
    ranked = [
        priced("H200-SXM", 8, 8.23),  # the 8-GPU instance is 16% cheaper per job: it leads
        priced("B200", 8, 9.00),  # the faster layout leads at the same bill...
        priced("H200-SXM", 1, 9.76),
        priced("B200", 1, 9.20),  # ...but one B200 costs the same: the chart shows one
        priced("B200", 2, 9.10),
        {**priced("A2", 1, 1.0), "fits": False},
    ]
    chosen = [(c["gpu"], c["gpu_count"]) for c in recommended_per_gpu_type(ranked)]
    assert chosen == [("H200-SXM", 8), ("B200", 1)]


def test_the_memory_chart_of_a_lora_job_shows_the_recommended_gpu_at_its_count(client):
    html = client.get(
        "/size/", {"model": "llama-3.1-8b", "task": "lora", "context_tokens": 4096}
    ).content.decode()
    chart = html[html.index("sizing-chart") :]
    chart = chart[: chart.index("</figure>")]
    count, name = re.search(r'<p class="headline">(\d+)× (.+?) on ', html).groups()
    assert f">{name} ×{count}<" in chart


@pytest.mark.parametrize("width", [360.0, 640.0])
def test_the_axis_numbers_stay_apart_at_any_chart_width(width):
    bars = [
        charts.MemoryBar("B300 ×1", {"weights": 140.0, "activations": 9.9}, 285.1, True),
        charts.MemoryBar("H100 SXM ×8", {"weights": 50.0, "activations": 3.5}, 79.2, True),
    ]
    root = ET.fromstring(charts.memory_chart(bars, width=width))
    ticks = [
        (float(text.get("x")), text.text)
        for text in root.iter(f"{SVG}text")
        if "axis" in (text.get("class") or "")
        and text.get("text-anchor") == "middle"
        and text.text.replace(",", "").isdigit()
    ]
    assert len(ticks) >= 2
    for (x0, a), (x1, b) in itertools.pairwise(ticks):
        assert x1 - x0 > (text_width(a, 12) + text_width(b, 12)) / 2 + 4, (a, b)
    values = [
        t.text
        for t in root.iter(f"{SVG}text")
        if t.text and re.fullmatch(r"[\d.]+ / [\d.]+", t.text)
    ]
    assert (values == ["149.9 / 285.1", "53.5 / 79.2"]) == (width < 480)
