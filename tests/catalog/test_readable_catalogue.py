"""The catalogue as a person reads it (issue 24): vendors named as they write themselves, filters
that take any case, "any" for an empty choice, a name search, words for the confidence badges,
and an admin that says "price refreshes" and asks why a price was changed by hand."""

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from catalog.filters import GpuFilter, OfferFilter
from catalog.models import Gpu, Offer, PriceRefresh, Vendor


@pytest.fixture
def catalog(bundled_catalog, db):
    """The bundled catalogue."""


@pytest.fixture
def api() -> APIClient:
    return APIClient()


def test_vendors_read_as_they_write_their_names():
    assert dict(Vendor.choices) == {
        "NVIDIA": "NVIDIA",
        "AMD": "AMD",
        "Intel": "Intel",
        "Google": "Google",
        "AWS": "AWS",
    }


def test_empty_choices_read_any_and_the_offer_vendor_is_labelled_vendor():
    offer_form = OfferFilter().form
    assert offer_form.fields["vendor"].label == "Vendor"
    for name in ("vendor", "gpu", "provider", "provider_kind", "pricing_model"):
        assert offer_form.fields[name].choices[0] == ("", "any"), name
    assert GpuFilter().form.fields["vendor"].choices[0] == ("", "any")


@pytest.mark.parametrize("vendor", ["google", "GOOGLE", "Google"])
def test_the_vendor_filter_takes_any_case(api, catalog, vendor):
    response = api.get("/api/v1/gpus/", {"vendor": vendor})
    assert response.status_code == 200, response.content
    rows = response.json()["results"]
    assert rows and {row["vendor"] for row in rows} == {"Google"}


def test_the_gpu_filter_takes_the_key_in_any_case(api, catalog):
    lower = api.get("/api/v1/offers/", {"gpu": "h100-sxm", "page_size": 5})
    exact = api.get("/api/v1/offers/", {"gpu": "H100-SXM", "page_size": 5})
    assert lower.status_code == exact.status_code == 200
    assert lower.json()["count"] == exact.json()["count"] > 0


def test_an_unknown_key_is_still_a_400_in_any_case(api, catalog):
    response = api.get("/api/v1/offers/", {"gpu": "h100-nonsense"})
    assert response.status_code == 400
    assert "gpu" in response.json()


def test_the_gpu_list_has_a_name_search(api, catalog, client):
    response = api.get("/api/v1/gpus/", {"name": "h100"})
    names = {row["name"] for row in response.json()["results"]}
    assert names and all("H100" in name for name in names)
    page = client.get("/", {"name": "mi300"}).content.decode()
    assert 'name="name"' in page
    assert "MI300X" in page and "H100" not in page.split("gpu-table", 1)[1]


def test_confidence_badges_say_what_they_mean(client, catalog):
    page = client.get("/").content.decode()
    assert 'id="confidence-legend"' in page
    if Gpu.objects.exclude(confidence="high").exists():
        assert 'title="Medium confidence:' in page or 'title="Low confidence:' in page


def test_the_admin_says_price_refreshes_and_the_browser_icon_is_found(client, db):
    assert str(PriceRefresh._meta.verbose_name_plural) == "price refreshes"
    client.force_login(get_user_model().objects.create_superuser("root", password="x"))
    index = client.get("/admin/").content.decode()
    assert "Price refreshes" in index and "Price refreshs" not in index
    icon = client.get("/favicon.ico")
    assert icon.status_code == 301 and icon["Location"].endswith("favicon.svg")


def test_the_csv_import_page_names_no_internal_type(client, db):
    client.force_login(get_user_model().objects.create_superuser("root", password="x"))
    page = client.get("/admin/catalog/pricerefresh/import-csv/")
    assert page.status_code == 200
    assert "PriceQuote" not in page.content.decode()


def zone_siblings_in_python(offers) -> dict[tuple, list[str]]:
    """The same offer at the same price in several zones, grouped here without the database."""
    groups: dict[tuple, list[str]] = {}
    for offer in offers:
        key = (
            offer.provider_id,
            offer.instance_type,
            offer.region,
            offer.gpu_id,
            offer.gpu_count,
            offer.pricing_model,
            offer.usd_per_hour,
        )
        groups.setdefault(key, []).append(offer.zone)
    return groups


def test_the_offers_page_shows_one_row_per_offer_across_its_zones(client, catalog):
    spot = Offer.objects.filter(pricing_model="spot")
    groups = zone_siblings_in_python(spot)
    assert len(groups) < spot.count()  # the bundled catalogue lists spot prices per zone
    page = client.get("/offers/", {"pricing_model": "spot"}).content.decode()
    assert f"{spot.count()} offers" in page
    assert f"in {len(groups)} rows" in page
    pages = -(-len(groups) // 50)
    assert f"page 1 of {pages}" in page
    key, zones = next((k, sorted(z)) for k, z in groups.items() if all(z) and len(z) >= 3)
    provider = Offer.objects.filter(provider_id=key[0]).first().provider.key
    filtered = client.get(
        "/offers/", {"pricing_model": "spot", "provider": provider, "region": key[2]}
    ).content.decode()
    assert f"{len(zones)} zones: {', '.join(zones)}" in filtered


def test_a_zone_with_its_own_price_keeps_its_own_row(client, catalog):
    key = next(
        key
        for key, zones in zone_siblings_in_python(
            Offer.objects.filter(pricing_model="spot")
        ).items()
        if len([zone for zone in zones if zone]) >= 2
    )
    provider_id, instance_type, region, gpu_id, gpu_count, _, usd_per_hour = key

    siblings = Offer.objects.filter(
        provider_id=provider_id,
        instance_type=instance_type,
        gpu_id=gpu_id,
        gpu_count=gpu_count,
        region=region,
        pricing_model="spot",
        usd_per_hour=usd_per_hour,
    ).order_by("zone")
    dearer = siblings.last()
    Offer.objects.filter(pk=dearer.pk).update(usd_per_hour=usd_per_hour * 3)
    page = client.get(
        "/offers/", {"pricing_model": "spot", "region": region, "provider": dearer.provider.key}
    ).content.decode()
    rest = [offer.zone for offer in siblings if offer.pk != dearer.pk]
    if len(rest) > 1:
        assert f"{len(rest)} zones: {', '.join(rest)}" in page
    else:
        assert f'<span class="muted">{rest[0]}</span>' in page
    assert f'<span class="muted">{dearer.zone}</span>' in page
