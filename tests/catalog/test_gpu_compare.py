"""GPUs side by side: /gpus/compare/?gpu=...&gpu=... names two to four GPUs (any case), shows
their datasheet figures, cheapest prices and offer counts with the best of each row marked, and
refuses what it cannot compare with a 400 that says why."""

import re

import pytest

from catalog.models import Gpu, Offer
from catalog.templatetags.catalog_tags import number


@pytest.fixture
def catalog(bundled_catalog, db):
    """The bundled catalogue."""


def row_cells(html: str, label: str) -> list[str]:
    row = re.search(rf'<th scope="row">{re.escape(label)}</th>(.*?)</tr>', html, re.S).group(1)
    return re.findall(r"<td[^>]*>(.*?)</td>", row)


def test_two_gpus_side_by_side_with_their_datasheet_figures(client, catalog):
    response = client.get("/gpus/compare/", {"gpu": ["h100-sxm", "MI300X"]})
    assert response.status_code == 200
    html = response.content.decode()
    h100, mi300x = (
        Gpu.objects.get(canonical_key="H100-SXM"),
        Gpu.objects.get(canonical_key="MI300X"),
    )
    assert html.index(h100.name) < html.index(mi300x.name)  # in the query's order
    memory = row_cells(html, "Memory GiB")
    assert memory == [number(h100.memory_gib), f"<strong>{number(mi300x.memory_gib)}</strong>"]
    bandwidth = row_cells(html, "Bandwidth GB/s")
    assert number(h100.memory_bandwidth_gb_s) in bandwidth[0]
    offers = row_cells(html, "Offers")
    assert offers == [str(Offer.objects.filter(gpu=h100).count()), str(mi300x.offers.count())]


def test_the_cheaper_on_demand_price_is_the_one_marked(client, catalog):
    html = client.get("/gpus/compare/", {"gpu": ["H100-SXM", "H200-SXM"]}).content.decode()
    prices = row_cells(html, "On-demand from $/GPU-h")
    values = [float(re.sub(r"[^\d.]", "", cell)) for cell in prices]
    marked = [cell.startswith("<strong>") for cell in prices]
    assert marked == [value == min(values) for value in values]


def test_the_gpu_list_ticks_gpus_into_the_comparison(client, catalog):
    html = client.get("/").content.decode()
    assert 'form id="compare-form"' in html
    assert 'name="gpu" value="H100-SXM" form="compare-form"' in html


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        (["H100-SXM"], "Choose 2 to 4 GPUs to compare (1 chosen)"),
        (["H100-SXM", "h100-sxm"], "Choose 2 to 4 GPUs to compare (1 chosen)"),
        (["H100-SXM", "H200-SXM", "B200-SXM", "MI300X", "A100-80GB-SXM"], "(5 chosen)"),
        (["H100-SXM", "no-such-gpu"], "No GPU has the key &#x27;no-such-gpu&#x27;."),
        ([], "(0 chosen)"),
    ],
)
def test_what_cannot_be_compared_is_a_400_that_says_why(client, catalog, keys, message):
    response = client.get("/gpus/compare/", {"gpu": keys})
    assert response.status_code == 400
    assert message in response.content.decode()
