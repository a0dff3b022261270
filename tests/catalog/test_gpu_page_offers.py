"""A GPU's page answers where it is cheapest: offers grouped by provider, cheapest provider
first, on-demand and spot side by side, the rest paged, and the full list one link away."""

import re
from dataclasses import dataclass

import pytest

from catalog.domain.offer_groups import group_offers_by_provider
from catalog.models import Offer
from catalog.views import PROVIDERS_PER_PAGE, ROWS_PER_PROVIDER


@dataclass
class _Provider:
    key: str
    name: str


@dataclass
class _Offer:
    provider: _Provider
    instance_type: str
    region: str
    zone: str
    gpu_count: int
    pricing_model: str
    usd_per_hour: float

    @property
    def usd_per_gpu_hour(self) -> float:
        return self.usd_per_hour / self.gpu_count


CHEAP, DEAR = _Provider("cheap", "Cheap Cloud"), _Provider("dear", "Dear Cloud")


def test_on_demand_and_spot_of_one_instance_share_a_row_and_the_cheapest_provider_leads():
    offers = [
        _Offer(DEAR, "big.8x", "us-east", "", 8, "on_demand", 16.0),
        _Offer(CHEAP, "gpu.1x", "eu-west", "", 1, "on_demand", 3.0),
        _Offer(CHEAP, "gpu.1x", "eu-west", "", 1, "spot", 1.5),
        _Offer(CHEAP, "gpu.1x", "us-east", "", 1, "on_demand", 2.5),
    ]
    groups = group_offers_by_provider(offers, rows_per_provider=10)
    assert [g.provider_key for g in groups] == ["cheap", "dear"]
    cheap = groups[0]
    assert [(r.region, r.cheapest_usd_per_gpu_hour) for r in cheap.rows] == [
        ("eu-west", 1.5),
        ("us-east", 2.5),
    ]
    paired = cheap.rows[0]
    assert paired.on_demand.usd_per_hour == 3.0 and paired.spot.usd_per_hour == 1.5
    assert cheap.offer_count == 3 and groups[1].rows[0].spot is None


def test_each_provider_shows_its_cheapest_rows_and_counts_the_rest():
    offers = [_Offer(CHEAP, f"gpu.{n}", "r", "", 1, "on_demand", 1.0 + n / 10) for n in range(15)]
    (group,) = group_offers_by_provider(offers, rows_per_provider=10)
    assert [r.instance_type for r in group.visible_rows] == [f"gpu.{n}" for n in range(10)]
    assert group.hidden_count == 5


def _provider_blocks(page: str) -> list[tuple[str, list[float]]]:
    """Each provider's block on the page: its key and the cheapest $/GPU-hour of each row."""
    blocks = []
    for key, body in re.findall(
        r'<tbody class="provider-group" data-provider="([^"]+)">(.*?)</tbody>', page, re.S
    ):
        rows = re.findall(r'<tr class="instance">(.*?)</tr>', body, re.S)
        prices = []
        for row in rows:
            cells = re.findall(r'class="num (?:on-demand|spot)">(.*?)</td>', row, re.S)
            values = [float(m) for c in cells for m in re.findall(r"\$([\d,.]+)", c)]
            prices.append(min(values))
        blocks.append((key, prices))
    return blocks


def test_the_gpu_page_groups_offers_by_provider_cheapest_first(client, catalog):
    offers = Offer.objects.filter(gpu__canonical_key="H100-SXM")
    page = client.get("/gpus/H100-SXM/").content.decode()
    blocks = _provider_blocks(page)
    providers = set(offers.values_list("provider__key", flat=True))
    assert 0 < len(blocks) == min(len(providers), PROVIDERS_PER_PAGE)
    leads = [prices[0] for _, prices in blocks]
    assert leads == sorted(leads)
    for _, prices in blocks:
        assert prices == sorted(prices) and len(prices) <= ROWS_PER_PROVIDER
    cheapest = min(offer.usd_per_gpu_hour for offer in offers)
    assert leads[0] == pytest.approx(cheapest, abs=0.0006)  # shown to the tenth of a cent
    assert page.count('<tr class="instance">') < offers.count()


def test_a_provider_with_more_rows_links_to_its_filtered_offers(client, catalog):
    page = client.get("/gpus/H100-SXM/").content.decode()
    more = re.findall(r'gpu=H100-SXM&amp;provider=(\w+)">(\d+) more instance', page)
    assert more, "the bundled H100 SXM offers include a provider with more than 10 instances"
    provider, hidden = more[0]
    listed = client.get(f"/offers/?gpu=H100-SXM&provider={provider}").content.decode()
    assert "offer" in listed and int(hidden) > 0


def test_providers_past_the_first_page_are_on_the_next(client, catalog):
    providers = set(
        Offer.objects.filter(gpu__canonical_key="H100-SXM").values_list("provider", flat=True)
    )
    first = {key for key, _ in _provider_blocks(client.get("/gpus/H100-SXM/").content.decode())}
    assert len(providers) > PROVIDERS_PER_PAGE  # the bundled H100 SXM offers fill two pages
    second = client.get("/gpus/H100-SXM/?page=2").content.decode()
    keys = {key for key, _ in _provider_blocks(second)}
    assert keys and not keys & first


def test_all_1_lists_every_offer_in_one_table(client, catalog):
    count = Offer.objects.filter(gpu__canonical_key="H100-SXM").count()
    page = client.get("/gpus/H100-SXM/?all=1").content.decode()
    table = page[page.index('<table class="data offers">') :]
    assert table.count("<tr>") - 1 == count  # one header row
    assert 'data-provider="' not in page


def test_a_bad_provider_page_number_shows_the_last_page_not_an_error(client, catalog):
    assert client.get("/gpus/H100-SXM/?page=999").status_code == 200
    assert client.get("/gpus/H100-SXM/?page=abc").status_code == 200
