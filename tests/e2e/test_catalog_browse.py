"""A person browses the catalogue: GPU list, filtered offers, a GPU's page."""

import re

import pytest
from playwright.sync_api import Page, expect

from catalog.models import Gpu
from catalog.services import catalog_load_bundled


@pytest.fixture
def site(live_server, transactional_db) -> str:
    catalog_load_bundled()
    return live_server.url


def test_browse_gpus_filter_offers_and_open_a_gpu_page(page: Page, site: str):
    page.goto(f"{site}/")
    expect(page.get_by_role("heading", name="GPUs")).to_be_visible()
    expect(page.locator("#gpu-table tbody tr")).to_have_count(Gpu.objects.count())

    # Sort by memory, largest first: a 288 GiB part (B300, GB300 or MI355X) leads.
    page.get_by_role("link", name="Memory GiB").click()
    page.get_by_role("link", name=re.compile("Memory GiB")).click()
    expect(page.locator("#gpu-table tbody tr").first.locator("td").nth(2)).to_have_text("288")

    page.get_by_role("link", name="Offers", exact=True).click()
    page.get_by_label("GPU", exact=True).select_option(label="H100 SXM")
    page.get_by_label("Pricing model").select_option("spot")
    page.get_by_label("Max. $/GPU-hour").fill("3")
    page.get_by_role("button", name="Filter").click()

    rows = page.locator("table.offers tbody tr")
    expect(rows.first).to_be_visible()
    assert rows.count() > 0
    for row_text in rows.all_inner_texts():
        assert "H100 SXM" in row_text and "spot" in row_text
        per_gpu_hour = float(row_text.split("\t")[7].lstrip("$").replace(",", ""))
        assert per_gpu_hour <= 3

    rows.first.get_by_role("link", name="H100 SXM").click()
    expect(page.get_by_role("heading", name=re.compile("H100 SXM"))).to_be_visible()
    expect(page.get_by_text("3,350 GB/s")).to_be_visible()
    expect(page.get_by_role("heading", name="Offers, cheapest provider first")).to_be_visible()
    page.get_by_role("link", name="every offer in one list").click()
    prices = [
        float(text.lstrip("$").replace(",", ""))
        for text in page.locator("table.offers tbody tr td:nth-child(8)").all_inner_texts()
    ]
    assert prices == sorted(prices) and len(prices) > 0


def _dollars(text: str) -> float | None:
    return float(text.lstrip("$").replace(",", "")) if text.startswith("$") else None


def test_a_gpu_page_groups_offers_by_provider_with_spot_beside_on_demand(page: Page, site: str):
    page.goto(f"{site}/gpus/H100-SXM/")
    groups = page.locator("#offers-by-provider tbody.provider-group")
    expect(groups.first).to_be_visible()
    leads = []
    for index in range(groups.count()):
        group = groups.nth(index)
        rows = group.locator("tr.instance")
        assert 1 <= rows.count() <= 10
        cheapest = []
        for row in range(rows.count()):
            cells = rows.nth(row).locator("td")
            prices = [_dollars(cells.nth(column).inner_text()) for column in (3, 4)]
            cheapest.append(min(p for p in prices if p is not None))
        assert cheapest == sorted(cheapest)
        leads.append(cheapest[0])
    assert leads == sorted(leads)
    both = (
        page.locator("#offers-by-provider tr.instance")
        .filter(has=page.locator("td.spot a"))
        .filter(has=page.locator("td.on-demand a"))
    )
    expect(both.first).to_be_visible()  # one instance, its on-demand and spot price in one row

    page.get_by_role("link", name="more providers").click()
    expect(page.locator("#offers-by-provider tbody.provider-group").first).to_be_visible()
    expect(page.get_by_role("link", name="cheaper providers")).to_be_visible()


def test_a_bad_filter_value_shows_the_error_not_a_crash(page: Page, site: str):
    page.goto(f"{site}/offers/?max_usd_per_hour=abc")
    expect(page.get_by_text("Enter a number.")).to_be_visible()
    expect(page.get_by_text("No offer matches these filters.")).to_be_visible()


def test_tick_two_gpus_and_compare_them_side_by_side(page: Page, site: str):
    page.goto(f"{site}/")
    page.get_by_label("Compare H100 SXM").check()
    page.get_by_label("Compare AMD Instinct MI300X").check()
    page.get_by_role("button", name="Compare the ticked GPUs").click()
    expect(page).to_have_url(
        re.compile(r"/gpus/compare/\?gpu=(H100-SXM&gpu=MI300X|MI300X&gpu=H100-SXM)$")
    )
    table = page.locator("#gpu-compare")
    expect(table.get_by_role("link", name="H100 SXM")).to_be_visible()
    expect(table.get_by_role("link", name="AMD Instinct MI300X")).to_be_visible()
    expect(table.get_by_role("rowheader", name="Spot from $/GPU-h")).to_be_visible()
