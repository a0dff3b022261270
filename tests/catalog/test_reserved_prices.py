"""Reserved 1-year and 3-year prices from the Azure Retail Prices feed: stored as their own
pricing models at the hourly equivalent of the term's price, with history and quarantine as
on-demand and spot have; shown labelled, never as the cheapest on-demand price."""

from decimal import Decimal

import httpx
import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.test import APIClient

from catalog.domain.quotes import PricingModel, reserved_hourly_equivalent
from catalog.feeds.azure import fetch_azure, parse_sku_table
from catalog.feeds.http import TransientFeedError, new_client
from catalog.models import Gpu, Offer, PriceHistory, PriceRefresh, Provider, QuarantinedPrice
from catalog.selectors import gpu_cheapest_per_gpu_hour_history, gpu_offer_stats_list
from catalog.services import BUNDLED_DATA_DIR
from tests.catalog.azure_prices import (
    BASE,
    pages_with_reservations,
    refresh_azure,
    reservation,
    transport_for,
)

A100 = "Standard_NC24ads_A100_v4"  # on demand in eastus: $3.673 an hour
T4 = "Standard_NC4as_T4_v3"  # on demand in eastus: $0.526 an hour
RESERVED = [PricingModel.RESERVED_1Y.value, PricingModel.RESERVED_3Y.value]


def azure_skus():
    with (BUNDLED_DATA_DIR / "azure_gpu_skus.csv").open() as table:
        return parse_sku_table(table)


def fetched(pages: list[dict]):
    with new_client(transport=transport_for(pages)) as client:
        return fetch_azure(client, BASE, azure_skus(), max_bytes=10**6)


def reserved_offer(instance_type: str, pricing_model: str) -> Offer:
    return Offer.objects.get(
        provider__key="azure",
        instance_type=instance_type,
        region="eastus",
        pricing_model=pricing_model,
    )


def reserved_prices() -> dict[int, Decimal]:
    return dict(Offer.objects.filter(pricing_model__in=RESERVED).values_list("id", "usd_per_hour"))


@pytest.fixture
def api() -> APIClient:
    return APIClient()


@pytest.fixture
def loaded(catalog) -> PriceRefresh:
    """The bundled catalogue plus one good Azure refresh that lists reservations."""
    run = refresh_azure()
    assert run.status == "succeeded", run.reason
    return run


# --- the feed ---------------------------------------------------------------------------------


def test_a_reservation_costs_its_terms_total_over_8760_hours_a_year():
    # Microsoft's documented Standard_M8ms example: 7740.0 for 1 Year, 11297.0 for 3 Years.
    assert reserved_hourly_equivalent(Decimal("7740.0"), 1) == Decimal("0.883562")
    assert reserved_hourly_equivalent(Decimal("11297.0"), 3) == Decimal("0.429871")


def test_the_azure_request_asks_for_reservations_beside_consumption_prices():
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.params["$filter"])
        return httpx.Response(200, json={"Items": [], "NextPageLink": None})

    with new_client(transport=httpx.MockTransport(handler)) as client:
        fetch_azure(client, BASE, azure_skus(), max_bytes=10**6)
    assert "(priceType eq 'Consumption' or priceType eq 'Reservation')" in seen[0]


def test_azure_reservations_become_reserved_quotes_at_the_hourly_equivalent_per_vm():
    prices = fetched(pages_with_reservations())
    assert prices.invalid == []
    by_key = {(q.instance_type, q.region, q.pricing_model): q for q in prices.quotes}
    assert len(prices.quotes) == len(by_key) == 17  # 11 consumption, 6 GPU reservations
    assert not any(q.instance_type == "Standard_M8ms" for q in prices.quotes)  # not a GPU SKU
    one_year = by_key[(A100, "eastus", PricingModel.RESERVED_1Y)]
    three_years = by_key[(A100, "eastus", PricingModel.RESERVED_3Y)]
    assert one_year.usd_per_hour == Decimal("2.277397")  # 19,950 / 8,760
    assert three_years.usd_per_hour == Decimal("1.469178")  # 38,610 / 26,280
    assert "$19,950.00 per VM for 1 Year" in one_year.source
    assert "$38,610.00 per VM for 3 Years" in three_years.source
    assert by_key[(A100, "eastus", PricingModel.ON_DEMAND)].usd_per_hour == Decimal("3.673")


def test_a_reservation_of_an_unknown_term_is_refused_with_a_reason_naming_it():
    pages = pages_with_reservations()
    reservation(pages, A100, "1 Year")["reservationTerm"] = "5 Years"
    prices = fetched(pages)
    assert len(prices.quotes) == 16
    (reason,) = prices.invalid
    assert A100 in reason and "'5 Years'" in reason and "neither '1 Year' nor '3 Years'" in reason


# --- the refresh ------------------------------------------------------------------------------


def test_a_refresh_stores_reservations_as_reserved_offers_with_the_total_in_the_source(catalog):
    run = refresh_azure()
    assert (run.status, run.new, run.rejected) == ("succeeded", 17, 0)
    offer = reserved_offer(A100, "reserved_1y")
    assert offer.usd_per_hour == Decimal("2.277397")
    assert offer.get_pricing_model_display() == "reserved 1 year"
    assert "$19,950.00 per VM for 1 Year" in offer.source
    assert reserved_offer(A100, "reserved_3y").get_pricing_model_display() == "reserved 3 years"
    (history,) = offer.history.all()
    assert (history.usd_per_hour, history.source) == (offer.usd_per_hour, offer.source)


def test_a_changed_reservation_writes_one_history_row_with_the_new_total(loaded):
    pages = pages_with_reservations()
    reservation(pages, A100, "1 Year").update(retailPrice=18500.0, unitPrice=18500.0)
    before = PriceHistory.objects.count()
    run = refresh_azure(pages)
    assert (run.status, run.changed, run.unchanged) == ("succeeded", 1, 16)
    assert PriceHistory.objects.count() == before + 1
    row = reserved_offer(A100, "reserved_1y").history.order_by("-id").first()
    assert (row.previous_usd_per_hour, row.usd_per_hour) == (
        Decimal("2.277397"),
        Decimal("2.111872"),
    )
    assert "$18,500.00 per VM for 1 Year" in row.source


def test_a_reservation_above_its_on_demand_price_is_rejected_saying_which_and_why(catalog):
    pages = pages_with_reservations()
    # $0.7890 an hour over the year against $0.526 on demand: the term's price misread.
    reservation(pages, T4, "1 Year").update(retailPrice=6911.64, unitPrice=6911.64)
    run = refresh_azure(pages)
    assert (run.status, run.new, run.rejected) == ("succeeded", 16, 1)
    assert not Offer.objects.filter(instance_type=T4, pricing_model="reserved_1y").exists()
    assert reserved_offer(T4, "reserved_3y").usd_per_hour == Decimal("0.213090")
    ((reason, count),) = run.details["rejected"]
    assert count == 1
    assert f"{T4} in eastus: reserved 1 year at $0.7890" in reason
    assert "above its on-demand $0.5260" in reason


def test_zero_and_negative_reservations_are_rejected(catalog):
    pages = pages_with_reservations()
    reservation(pages, A100, "1 Year").update(retailPrice=0.0)
    reservation(pages, A100, "3 Years").update(retailPrice=-100.0)
    run = refresh_azure(pages)
    assert (run.status, run.rejected) == ("succeeded", 2)
    assert not Offer.objects.filter(instance_type=A100, pricing_model__in=RESERVED).exists()
    assert all("is not positive" in reason for reason, _ in run.details["rejected"])


def test_a_reservation_of_an_unknown_term_is_a_rejected_row_of_the_refresh(catalog):
    pages = pages_with_reservations()
    reservation(pages, T4, "3 Years")["reservationTerm"] = "5 Years"
    run = refresh_azure(pages)
    assert (run.status, run.rejected) == ("succeeded", 1)
    assert any("'5 Years'" in reason for reason, _ in run.details["rejected"])


def test_a_reserved_price_falling_more_than_3x_is_held_for_a_person(loaded):
    pages = pages_with_reservations()
    reservation(pages, A100, "3 Years").update(retailPrice=9652.5)  # a quarter
    run = refresh_azure(pages)
    assert (run.status, run.quarantined) == ("succeeded", 1)
    held = QuarantinedPrice.objects.get()
    assert held.offer == reserved_offer(A100, "reserved_3y")
    assert (held.current_usd_per_hour, held.proposed_usd_per_hour) == (
        Decimal("1.469178"),
        Decimal("0.367295"),
    )
    assert reserved_offer(A100, "reserved_3y").usd_per_hour == Decimal("1.469178")


def _truncated_reservations() -> httpx.MockTransport:
    pages = pages_with_reservations()

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.params.get("page") == "3":
            return httpx.Response(200, content=b'{"Items": [{"armSkuName": "Standard_NC')
        return transport_for(pages).handle_request(request)

    return httpx.MockTransport(handler)


def _without_reservations() -> list[dict]:
    pages = pages_with_reservations()
    pages[2]["Items"] = []
    return pages


def _every_reservation_negative() -> list[dict]:
    pages = pages_with_reservations()
    for item in pages[2]["Items"]:
        item["retailPrice"] = -item["retailPrice"]
    return pages


FAULTS = {
    "http 500": lambda: {"transport": httpx.MockTransport(lambda r: httpx.Response(500))},
    "truncated reservation page": lambda: {"transport": _truncated_reservations()},
    "the reservations missing": lambda: {"pages": _without_reservations()},
    "every reservation negative": lambda: {"pages": _every_reservation_negative()},
}


@pytest.mark.parametrize("fault", FAULTS, ids=str)
def test_a_failed_refresh_leaves_reserved_prices_unchanged(loaded, fault):
    before, history = reserved_prices(), PriceHistory.objects.count()
    assert len(before) == 6
    try:
        run = refresh_azure(**FAULTS[fault]())
    except TransientFeedError:
        run = PriceRefresh.objects.filter(source="azure").latest("started_at")
    assert (run.status, bool(run.reason)) == ("failed", True)
    assert reserved_prices() == before
    assert PriceHistory.objects.count() == history


# --- what people see --------------------------------------------------------------------------


def test_the_bundled_catalogue_has_no_reserved_prices(catalog):
    assert not Offer.objects.filter(pricing_model__in=RESERVED).exists()


def _cheapest_reservation_of(gpu: Gpu) -> Offer:
    """A reserved offer of `gpu` cheaper per GPU-hour than any of its offers, with history."""
    offer = Offer.objects.create(
        provider=Provider.objects.get(key="azure"),
        instance_type="test-reserved",
        region="eastus",
        gpu=gpu,
        gpu_count=1,
        accelerator_name=gpu.name,
        pricing_model="reserved_3y",
        usd_per_hour=Decimal("0.011"),
        source="test",
        price_observed_at=timezone.now(),
    )
    PriceHistory.objects.create(
        offer=offer, usd_per_hour=offer.usd_per_hour, observed_at=timezone.now(), source="test"
    )
    return offer


def test_a_reserved_price_is_never_the_cheapest_on_demand_or_spot_price(loaded):
    gpu = Gpu.objects.get(canonical_key="A100-80GB-PCIE")
    _cheapest_reservation_of(gpu)
    stats = gpu_offer_stats_list()[gpu.id]
    assert stats.on_demand.usd_per_gpu_hour > 0.011
    assert stats.spot.usd_per_gpu_hour > 0.011
    assert min(price for _, price in gpu_cheapest_per_gpu_hour_history(gpu=gpu)) > 0.011


def test_an_offer_page_labels_a_reservation_per_hour_paid_for_the_whole_term(client, loaded):
    page = client.get(reserved_offer(A100, "reserved_1y").get_absolute_url()).content.decode()
    assert "reserved 1 year" in page
    assert "per hour, paid for the whole term" in page and "8,760 hours" in page
    assert "$19,950.00 per VM for 1 Year" in page


def test_the_gpu_page_shows_reservations_in_their_own_columns(client, loaded):
    page = client.get("/gpus/A100-80GB-PCIE/").content.decode()
    assert "Reserved 1 year $/GPU-hour" in page and "Reserved 3 years $/GPU-hour" in page
    assert '<td class="num reserved-1y"><a href="' in page and ">$2.277</a>" in page
    assert ">$3.673</a>" in page  # the on-demand cell keeps the on-demand price


def test_the_offers_page_and_api_list_reserved_prices_by_pricing_model(client, api, loaded):
    page = client.get("/offers/", {"pricing_model": "reserved_3y"}).content.decode()
    assert page.count('<span class="badge reserved">reserved 3 years</span>') == 3
    assert "per hour, paid for the whole term" in page
    rows = api.get("/api/v1/offers/", {"pricing_model": "reserved_1y"}).json()["results"]
    assert sorted((row["instance_type"], Decimal(str(row["usd_per_hour"]))) for row in rows) == [
        (A100, Decimal("2.277397")),
        (T4, Decimal("0.331050")),
        ("Standard_ND96isr_H100_v5", Decimal("61.940639")),
    ]


def test_the_admin_offer_list_shows_a_reservations_term_total(client, loaded):
    staff = get_user_model().objects.create_superuser("ops", password="pw-for-tests-only")
    client.force_login(staff)
    page = client.get("/admin/catalog/offer/", {"pricing_model__exact": "reserved_1y"})
    text = page.content.decode()
    assert "reserved 1 year" in text and "$19,950.00 per VM for 1 Year" in text
    change = client.get(f"/admin/catalog/offer/{reserved_offer(A100, 'reserved_1y').pk}/change/")
    assert "paid for the whole term" in change.content.decode()
