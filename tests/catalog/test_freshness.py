"""An offer's freshness: live (its feed's latest successful refresh listed it), snapshot (the
bundled snapshot, not refreshed since) or stale (a later refresh of its feed no longer lists
it). Before: on a fresh install every offer wore a red "stale" badge ("the provider may have
withdrawn it") because the bundled snapshot was dated 2026-01-01, and no answer said how old a
price was."""

from datetime import datetime
from decimal import Decimal

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from catalog.domain.freshness import LIVE, SNAPSHOT, STALE, freshness_note, offer_freshness
from catalog.domain.quotes import PriceQuote, PricingModel
from catalog.feeds import FetchedFeed
from catalog.feeds.http import FeedError
from catalog.models import Offer, PriceRefresh, PriceSource
from catalog.selectors import offer_list
from catalog.services.refresh import catalog_load_bundled, price_refresh

SNAPSHOT_DAY = "2026-01-01"


def _quote_for(offer: Offer, usd_per_hour: Decimal) -> PriceQuote:
    """What gpuhunt would list for an offer the catalogue has (H100: gpuhunt's name for it)."""
    return PriceQuote(
        provider=offer.provider.key,
        instance_type=offer.instance_type,
        region=offer.region,
        zone=offer.zone,
        accelerator_name="H100",
        gpu_count=offer.gpu_count,
        pricing_model=PricingModel(offer.pricing_model),
        usd_per_hour=usd_per_hour,
        source=f"gpuhunt {offer.provider.key}@test",
        gpu_memory_gib=Decimal(80),
    )


@pytest.fixture
def lambda_h100(catalog) -> Offer:
    return (
        Offer.objects.filter(provider__key="lambda", gpu__canonical_key="H100-SXM")
        .select_related("provider")
        .order_by("usd_per_hour")
        .first()
    )


def _refresh_listing(offers: list[Offer]) -> PriceRefresh:
    quotes = [_quote_for(offer, offer.usd_per_hour + Decimal("0.01")) for offer in offers]
    return price_refresh(
        source=PriceSource.GPUHUNT,
        fetch=lambda: FetchedFeed(quotes=quotes, observed_at=timezone.now()),
        triggered_by="test",
    )


def _freshness(offer: Offer) -> str:
    return offer_list().get(pk=offer.pk).freshness


@pytest.mark.parametrize(
    ("source", "delisted", "state"),
    [
        ("bundled", False, SNAPSHOT),
        ("gpuhunt", False, LIVE),
        (None, False, LIVE),  # entered by staff
        ("bundled", True, STALE),
        ("gpuhunt", True, STALE),
    ],
)
def test_the_three_states(source, delisted, state):
    assert offer_freshness(listed_by_source=source, delisted=delisted) == state


def test_only_stale_says_it_may_have_been_withdrawn():
    day = datetime(2026, 1, 1)
    assert freshness_note(SNAPSHOT, day) == "bundled snapshot of 2026-01-01"
    assert "withdrawn" in freshness_note(STALE, day)
    assert "withdrawn" not in freshness_note(LIVE, day) + freshness_note(SNAPSHOT, day)


def test_a_fresh_install_shows_every_offer_as_the_dated_snapshot_and_none_stale(client, catalog):
    assert {offer.freshness for offer in offer_list()} == {SNAPSHOT}
    page = client.get("/offers/").content.decode()
    assert f"snapshot {SNAPSHOT_DAY}" in page
    assert ">stale</span>" not in page
    assert "Last successful refresh per source: bundled snapshot" in page
    body = APIClient().get("/api/v1/offers/").json()["results"]
    assert {row["freshness"] for row in body} == {SNAPSHOT}
    assert {row["price_observed_at"][:10] for row in body} == {SNAPSHOT_DAY}


def test_a_refresh_makes_what_it_lists_live_and_what_it_covers_but_omits_stale(lambda_h100):
    other_lambda = Offer.objects.filter(provider__key="lambda").exclude(pk=lambda_h100.pk)
    other_provider = Offer.objects.exclude(provider__key="lambda").first()
    run = _refresh_listing([lambda_h100])
    assert run.status == PriceRefresh.Status.SUCCEEDED, run.reason
    assert _freshness(lambda_h100) == LIVE
    assert {offer.freshness for offer in offer_list().filter(pk__in=other_lambda)} == {STALE}
    assert _freshness(other_provider) == SNAPSHOT  # gpuhunt listed no offer of its provider
    assert run.stale == other_lambda.count()
    assert [p.key for p in run.providers.all()] == ["lambda"]


def test_reloading_the_bundled_snapshot_never_turns_a_live_offer_back_into_the_snapshot(
    lambda_h100,
):
    _refresh_listing([lambda_h100])
    catalog_load_bundled()
    assert _freshness(lambda_h100) == LIVE
    assert Offer.objects.get(pk=lambda_h100.pk).usd_per_hour == lambda_h100.usd_per_hour + Decimal(
        "0.01"
    )


def test_a_later_refresh_that_lists_a_stale_offer_again_makes_it_live(lambda_h100):
    other = (
        Offer.objects.filter(provider__key="lambda", gpu=lambda_h100.gpu)
        .exclude(pk=lambda_h100.pk)
        .select_related("provider")
        .first()
    )
    _refresh_listing([lambda_h100])
    assert _freshness(other) == STALE
    _refresh_listing([lambda_h100, other])
    assert _freshness(other) == LIVE


def test_a_failed_refresh_changes_no_freshness_and_the_page_says_it_failed(client, lambda_h100):
    def broken() -> FetchedFeed:
        raise FeedError("gpuhunt answered 503")

    run = price_refresh(source=PriceSource.GPUHUNT, fetch=broken, triggered_by="test")
    assert run.status == PriceRefresh.Status.FAILED
    assert {offer.freshness for offer in offer_list()} == {SNAPSHOT}
    page = client.get("/offers/").content.decode()
    assert "refresh-failed" in page and "gpuhunt catalogue refresh failed" in page
    assert "gpuhunt answered 503" in page


def test_an_offer_page_dates_its_price_and_links_the_providers_pricing_page(client, lambda_h100):
    page = client.get(f"/offers/{lambda_h100.pk}/").content.decode()
    assert f"bundled snapshot of {SNAPSHOT_DAY}" in page
    assert 'id="pricing-url"' in page and "https://lambda.ai/pricing" in page


def _h100_list_row(client) -> str:
    page = client.get("/").content.decode()
    start = page.index('<a href="/gpus/H100-SXM/">')
    return page[start : page.index("</tr>", start)]


def test_the_gpu_list_dates_its_cheapest_prices_and_never_prices_from_a_stale_offer(
    client, lambda_h100
):
    """Before: the "from" price had no age, and a withdrawn offer could be the cheapest."""
    assert f"snapshot {SNAPSHOT_DAY}" in _h100_list_row(client)
    Offer.objects.filter(pk=lambda_h100.pk).update(
        usd_per_hour=Decimal("0.01") * lambda_h100.gpu_count, pricing_model="on_demand"
    )
    assert "$0.01" in _h100_list_row(client)
    # A refresh of Lambda that lists another of its offers, not this one: it turns stale.
    other = Offer.objects.filter(provider__key="lambda", gpu=lambda_h100.gpu).exclude(
        pk=lambda_h100.pk
    )
    run = _refresh_listing([other.select_related("provider").first()])
    assert run.status == PriceRefresh.Status.SUCCEEDED, run.reason
    assert _freshness(lambda_h100) == STALE
    row = _h100_list_row(client)
    assert "$0.01" not in row and ">stale</span>" not in row
    [h100] = [gpu for gpu in client.get("/").context["gpus"] if gpu.canonical_key == "H100-SXM"]
    not_stale = [
        offer.usd_per_gpu_hour
        for offer in offer_list().filter(gpu=lambda_h100.gpu, pricing_model="on_demand")
        if offer.freshness != STALE
    ]
    assert h100.min_on_demand_usd_per_gpu_hour == min(not_stale)
    assert h100.on_demand_from.freshness != STALE
