"""The REST API under /api/v1/, the OpenAPI schema and the docs page, on the bundled catalogue."""

import re
from decimal import Decimal

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from catalog.models import Gpu, Offer, Provider

GPUS_URL = "/api/v1/gpus/"
OFFERS_URL = "/api/v1/offers/"
CDN_MARKERS = ["cdn.jsdelivr", "unpkg", "cdnjs"]


@pytest.fixture
def catalog(bundled_catalog, db):
    """The bundled catalogue: 82 accelerators, ~10,000 offers from 14 providers."""


@pytest.fixture
def api():
    return APIClient()


def fetch_all(api: APIClient, url: str, params: dict | None = None) -> list[dict]:
    """Every row of a paginated list, following `next` links; checks `count` matches."""
    response = api.get(url, {**(params or {}), "page_size": 500})
    assert response.status_code == 200, response.content
    body = response.json()
    count = body["count"]
    rows = list(body["results"])
    while body["next"]:
        response = api.get(body["next"])
        assert response.status_code == 200, response.content
        body = response.json()
        rows.extend(body["results"])
    assert len(rows) == count
    return rows


def assert_filtered(rows: list[dict], total: int, predicate) -> None:
    """The filter kept something, dropped something, and everything it kept matches."""
    assert rows, "filter returned nothing, so it proves nothing"
    assert len(rows) < total, "filter excluded nothing"
    offending = [row for row in rows if not predicate(row)]
    assert offending == []


def num(value) -> Decimal:
    return Decimal(str(value))


# --- GPUs -------------------------------------------------------------------------------------


def test_gpus_list_returns_every_gpu_with_detail_urls(api, catalog):
    rows = fetch_all(api, GPUS_URL)

    assert len(rows) == Gpu.objects.count()
    h100 = next(row for row in rows if row["canonical_key"] == "H100-SXM")
    assert h100["url"].endswith("/api/v1/gpus/H100-SXM/")
    assert "id" not in h100


def test_gpu_detail_is_addressed_by_canonical_key(api, catalog):
    response = api.get("/api/v1/gpus/H100-SXM/")

    assert response.status_code == 200
    body = response.json()
    gpu = Gpu.objects.get(canonical_key="H100-SXM")
    assert body["canonical_key"] == "H100-SXM"
    assert body["name"] == gpu.name
    assert num(body["memory_gib"]) == gpu.memory_gib
    assert body["memory_bytes"] == gpu.memory_bytes


def test_gpu_detail_for_unknown_canonical_key_is_404(api, catalog):
    assert api.get("/api/v1/gpus/NOPE-9000/").status_code == 404


def test_gpus_filter_by_vendor_keeps_only_that_vendor(api, catalog):
    rows = fetch_all(api, GPUS_URL, {"vendor": "AMD"})

    assert_filtered(rows, Gpu.objects.count(), lambda row: row["vendor"] == "AMD")


def test_gpus_filter_by_architecture_is_case_insensitive_exact_match(api, catalog):
    rows = fetch_all(api, GPUS_URL, {"architecture": "hopper"})

    assert_filtered(rows, Gpu.objects.count(), lambda row: row["architecture"] == "Hopper")
    assert len(rows) == Gpu.objects.filter(architecture="Hopper").count()


def test_gpus_filter_by_min_memory_gib_excludes_smaller_gpus(api, catalog):
    rows = fetch_all(api, GPUS_URL, {"min_memory_gib": "80"})

    assert_filtered(rows, Gpu.objects.count(), lambda row: num(row["memory_gib"]) >= 80)


@pytest.mark.parametrize("flag", ["supports_tf32", "supports_bf16", "supports_fp8"])
@pytest.mark.parametrize("wanted", [True, False])
def test_gpus_filter_by_precision_support_flag_keeps_only_matching_gpus(api, catalog, flag, wanted):
    rows = fetch_all(api, GPUS_URL, {flag: str(wanted).lower()})

    assert_filtered(rows, Gpu.objects.count(), lambda row: row[flag] is wanted)


@pytest.mark.parametrize(
    ("ordering", "key", "reverse"),
    [
        ("memory_gib", lambda row: num(row["memory_gib"]), False),
        ("-memory_gib", lambda row: num(row["memory_gib"]), True),
        ("memory_bandwidth_gb_s", lambda row: num(row["memory_bandwidth_gb_s"]), False),
        ("-name", lambda row: row["name"], True),
    ],
)
def test_gpus_ordering_sorts_the_list(api, catalog, ordering, key, reverse):
    rows = fetch_all(api, GPUS_URL, {"ordering": ordering})

    assert len(rows) == Gpu.objects.count()
    values = [key(row) for row in rows]
    assert values == sorted(values, reverse=reverse)
    assert values != sorted(values, reverse=not reverse)


@pytest.mark.parametrize(
    ("param", "value"),
    [("vendor", "Nokia"), ("min_memory_gib", "-1"), ("min_memory_gib", "lots")],
)
def test_gpus_bad_filter_value_is_400_naming_the_field(api, catalog, param, value):
    response = api.get(GPUS_URL, {param: value})

    assert response.status_code == 400
    assert param in response.json()


# --- Offers: filters --------------------------------------------------------------------------


@pytest.fixture
def total_offers(catalog) -> int:
    return Offer.objects.count()


@pytest.fixture
def gpu_vendor_by_key(catalog) -> dict[str, str]:
    return dict(Gpu.objects.values_list("canonical_key", "vendor"))


def test_offers_list_returns_every_offer(api, total_offers):
    rows = fetch_all(api, OFFERS_URL)

    assert len(rows) == total_offers
    assert len({row["id"] for row in rows}) == total_offers


def test_offers_filter_by_gpu_canonical_key_keeps_only_that_gpu(api, total_offers):
    rows = fetch_all(api, OFFERS_URL, {"gpu": "H100-SXM"})

    assert_filtered(rows, total_offers, lambda row: row["gpu"] == "H100-SXM")
    assert len(rows) == Offer.objects.filter(gpu__canonical_key="H100-SXM").count()


def test_offers_filter_by_vendor_excludes_other_vendors_gpus(api, total_offers, gpu_vendor_by_key):
    # One more AMD offer beside the bundled ones (OCI's MI300X/MI355X, AWS's Radeon Pro V520).
    amd_gpu = Gpu.objects.filter(vendor="AMD").first()
    amd_offer = Offer.objects.create(
        provider=Provider.objects.get(key="lambda"),
        instance_type="test.8x-mi300x",
        region="us-test-1",
        gpu=amd_gpu,
        gpu_count=8,
        accelerator_name=amd_gpu.name,
        pricing_model="on_demand",
        usd_per_hour=Decimal("20.000000"),
        source="test",
        price_observed_at=timezone.now(),
    )
    total = total_offers + 1

    nvidia = fetch_all(api, OFFERS_URL, {"vendor": "NVIDIA"})
    amd = fetch_all(api, OFFERS_URL, {"vendor": "AMD"})

    assert_filtered(nvidia, total, lambda row: gpu_vendor_by_key[row["gpu"]] == "NVIDIA")
    amd_ids = set(Offer.objects.filter(gpu__vendor="AMD").values_list("id", flat=True))
    assert amd_offer.id in amd_ids
    assert sorted(row["id"] for row in amd) == sorted(amd_ids)


def test_offers_filter_by_provider_key_keeps_only_that_provider(api, total_offers):
    rows = fetch_all(api, OFFERS_URL, {"provider": "lambda"})

    assert_filtered(rows, total_offers, lambda row: row["provider"] == "lambda")
    assert len(rows) == Offer.objects.filter(provider__key="lambda").count()


def test_offers_filter_by_region_is_case_insensitive_exact_match(api, total_offers):
    rows = fetch_all(api, OFFERS_URL, {"region": "US-EAST-1"})

    assert_filtered(rows, total_offers, lambda row: row["region"] == "us-east-1")
    assert len(rows) == Offer.objects.filter(region="us-east-1").count()


@pytest.mark.parametrize("pricing_model", ["on_demand", "spot"])
def test_offers_filter_by_pricing_model_keeps_only_that_model(api, total_offers, pricing_model):
    rows = fetch_all(api, OFFERS_URL, {"pricing_model": pricing_model})

    assert_filtered(rows, total_offers, lambda row: row["pricing_model"] == pricing_model)


def test_offers_filter_by_gpu_count_keeps_only_that_count(api, total_offers):
    rows = fetch_all(api, OFFERS_URL, {"gpu_count": "8"})

    assert_filtered(rows, total_offers, lambda row: row["gpu_count"] == 8)


def test_offers_filter_by_min_gpu_memory_gib_excludes_smaller_gpus(api, total_offers):
    rows = fetch_all(api, OFFERS_URL, {"min_gpu_memory_gib": "80"})

    assert_filtered(rows, total_offers, lambda row: num(row["gpu_memory_gib"]) >= 80)


def test_offers_filter_by_max_usd_per_hour_excludes_pricier_offers(api, total_offers):
    rows = fetch_all(api, OFFERS_URL, {"max_usd_per_hour": "2.50"})

    assert_filtered(rows, total_offers, lambda row: num(row["usd_per_hour"]) <= Decimal("2.50"))


def test_offers_filter_by_max_usd_per_gpu_hour_excludes_pricier_offers(api, total_offers):
    rows = fetch_all(api, OFFERS_URL, {"max_usd_per_gpu_hour": "1.50"})

    assert_filtered(rows, total_offers, lambda row: row["usd_per_gpu_hour"] <= 1.50)
    # It filters on the per-GPU price, not the instance price: some kept rows cost more.
    assert any(num(row["usd_per_hour"]) > Decimal("1.50") for row in rows)


def test_offers_filters_combine_with_and(api, total_offers):
    params = {"gpu": "H100-SXM", "pricing_model": "on_demand", "gpu_count": "8"}
    rows = fetch_all(api, OFFERS_URL, params)

    assert_filtered(
        rows,
        total_offers,
        lambda row: (
            (row["gpu"], row["pricing_model"], row["gpu_count"]) == ("H100-SXM", "on_demand", 8)
        ),
    )
    assert len(rows) < len(fetch_all(api, OFFERS_URL, {"gpu": "H100-SXM"}))


@pytest.mark.parametrize(
    ("param", "value"),
    [
        ("gpu", "nope"),
        ("vendor", "Nokia"),
        ("provider", "nope"),
        ("pricing_model", "reserved"),
        ("max_usd_per_hour", "abc"),
        ("max_usd_per_hour", "-1"),
        ("max_usd_per_gpu_hour", "abc"),
        ("gpu_count", "0"),
        ("gpu_count", "65"),
        ("gpu_count", "many"),
        ("gpu_count", "1.5"),
        ("min_gpu_memory_gib", "-1"),
        ("ordering", "provider"),
    ],
)
def test_offers_bad_filter_value_is_400_naming_the_field(api, catalog, param, value):
    response = api.get(OFFERS_URL, {param: value})

    assert response.status_code == 400
    assert param in response.json()


# --- Offers: ordering, pagination, derived price -----------------------------------------------


@pytest.mark.parametrize(
    ("ordering", "field", "reverse"),
    [
        ("usd_per_hour", "usd_per_hour", False),
        ("-usd_per_hour", "usd_per_hour", True),
        ("usd_per_gpu_hour", "usd_per_gpu_hour", False),
        ("-usd_per_gpu_hour", "usd_per_gpu_hour", True),
    ],
)
def test_offers_ordering_sorts_every_page(api, total_offers, ordering, field, reverse):
    rows = fetch_all(api, OFFERS_URL, {"ordering": ordering})

    assert len(rows) == total_offers
    values = [num(row[field]) for row in rows]
    assert values == sorted(values, reverse=reverse)
    assert values != sorted(values, reverse=not reverse)


def test_offers_default_order_is_cheapest_per_gpu_hour_first(api, total_offers):
    rows = fetch_all(api, OFFERS_URL)

    values = [row["usd_per_gpu_hour"] for row in rows]
    assert values == sorted(values)


def test_offers_page_size_paginates_with_count_and_next_link(api, total_offers):
    first = api.get(OFFERS_URL, {"page_size": 5}).json()

    assert first["count"] == total_offers
    assert len(first["results"]) == 5
    assert first["previous"] is None
    assert "page=2" in first["next"]
    assert "page_size=5" in first["next"]

    second = api.get(first["next"]).json()

    assert len(second["results"]) == 5
    assert second["count"] == total_offers
    first_ids = {row["id"] for row in first["results"]}
    second_ids = {row["id"] for row in second["results"]}
    assert first_ids.isdisjoint(second_ids)


def collect_ids_page_by_page(api: APIClient, url: str, params: dict, key: str) -> list:
    ids = []
    while url:
        body = api.get(url, params).json()
        ids.extend(row[key] for row in body["results"])
        url, params = body["next"], None
    return ids


@pytest.mark.parametrize(
    "ordering",
    [
        "usd_per_hour",
        "-usd_per_hour",
        "usd_per_gpu_hour",
        "-usd_per_gpu_hour",
        "gpu_count",
        "gpu_memory_gib",
    ],
)
def test_offers_paging_through_an_ordering_with_ties_visits_each_offer_once(
    api, total_offers, ordering
):
    # Many offers share a price, GPU count or GPU memory; each page must still continue
    # where the previous one stopped, with no offer repeated or skipped.
    params = {"ordering": ordering, "page_size": 200}
    ids = collect_ids_page_by_page(api, OFFERS_URL, params, "id")

    assert len(ids) == total_offers
    assert len(set(ids)) == total_offers


def test_gpus_paging_through_an_ordering_with_ties_visits_each_gpu_once(api, catalog):
    params = {"ordering": "vendor", "page_size": 5}
    keys = collect_ids_page_by_page(api, GPUS_URL, params, "canonical_key")

    assert sorted(keys) == sorted(Gpu.objects.values_list("canonical_key", flat=True))


def test_offers_page_past_the_end_is_404(api, total_offers):
    response = api.get(OFFERS_URL, {"page_size": 500, "page": 1000})

    assert response.status_code == 404


def test_offers_usd_per_gpu_hour_is_usd_per_hour_divided_by_gpu_count(api, total_offers):
    rows = fetch_all(api, OFFERS_URL)

    multi_gpu = [row for row in rows if row["gpu_count"] > 1]
    assert multi_gpu, "need multi-GPU offers for the division to matter"
    for row in rows:
        expected = float(num(row["usd_per_hour"]) / row["gpu_count"])
        assert row["usd_per_gpu_hour"] == pytest.approx(expected, rel=1e-9), row


def test_offer_usd_per_gpu_hour_is_recomputed_by_the_database_when_price_changes(api, total_offers):
    offer = Offer.objects.filter(gpu_count=8).first()
    offer.usd_per_hour = Decimal("16.000000")
    offer.save()

    row = api.get(f"{OFFERS_URL}{offer.id}/").json()
    cheap_enough = fetch_all(api, OFFERS_URL, {"max_usd_per_gpu_hour": "2.00"})
    too_dear = fetch_all(api, OFFERS_URL, {"max_usd_per_gpu_hour": "1.99"})

    assert num(row["usd_per_hour"]) == Decimal("16")
    assert row["usd_per_gpu_hour"] == pytest.approx(2.0)
    assert offer.id in {row["id"] for row in cheap_enough}
    assert offer.id not in {row["id"] for row in too_dear}


def test_offers_rows_carry_provider_and_gpu_keys_and_names(api, total_offers):
    row = api.get(OFFERS_URL, {"gpu": "H100-SXM", "provider": "lambda"}).json()["results"][0]
    offer = Offer.objects.select_related("gpu", "provider").get(id=row["id"])

    assert row["gpu"] == "H100-SXM"
    assert row["gpu_name"] == offer.gpu.name
    assert row["provider"] == "lambda"
    assert row["provider_name"] == offer.provider.name
    assert num(row["gpu_memory_gib"]) == offer.gpu.memory_gib


def test_offers_api_is_read_only(api, catalog):
    response = api.post(OFFERS_URL, {"usd_per_hour": "1.0"}, format="json")

    assert response.status_code in (401, 403, 405)
    offer = Offer.objects.first()
    detail = api.patch(f"{OFFERS_URL}{offer.id}/", {"usd_per_hour": "1.0"}, format="json")
    assert detail.status_code in (401, 403, 405)
    offer.refresh_from_db()
    assert offer.usd_per_hour != Decimal("1.0")


# --- Schema and docs --------------------------------------------------------------------------


def test_openapi_schema_documents_the_offers_endpoint_and_its_filters(api, db):
    response = api.get("/api/schema/")

    assert response.status_code == 200
    text = response.content.decode()
    assert "openapi" in text
    assert "/api/v1/offers/" in text
    assert "/api/v1/gpus/{canonical_key}/" in text
    assert "max_usd_per_gpu_hour" in text


def test_api_docs_page_is_html_served_without_any_cdn(api, db):
    response = api.get("/api/docs/")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    assert "swagger" in page.lower()
    found = [marker for marker in CDN_MARKERS if marker in page]
    assert found == []
    # No inline script (the Content Security Policy forbids it): the initialiser is its own
    # script, and it points Swagger UI at our schema.
    assert re.findall(r"<script(?![^>]*\bsrc=)[^>]*>", page) == []
    script = api.get("/api/docs/", {"script": ""})
    assert script.status_code == 200
    assert "/api/schema/" in script.content.decode()
