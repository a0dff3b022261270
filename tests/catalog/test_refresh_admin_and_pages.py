"""Staff see refresh runs, decide quarantined prices and import CSV; pages show freshness."""

from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from catalog.models import Offer, PriceHistory, PriceRefresh, QuarantinedPrice


@pytest.fixture
def staff(client, catalog):
    user = get_user_model().objects.create_superuser("ops", password="pw-for-tests-only")
    client.force_login(user)
    return user


@pytest.fixture
def held(catalog) -> QuarantinedPrice:
    offer = Offer.objects.filter(provider__key="lambda").first()
    run = PriceRefresh.objects.create(source="gpuhunt", status="succeeded")
    return QuarantinedPrice.objects.create(
        offer=offer,
        refresh=run,
        current_usd_per_hour=offer.usd_per_hour,
        proposed_usd_per_hour=offer.usd_per_hour * 10,
        observed_at=timezone.now(),
        source="test",
    )


def act(client, action: str, held: QuarantinedPrice):
    return client.post(
        "/admin/catalog/quarantinedprice/",
        {"action": action, "_selected_action": [held.pk]},
    )


def test_accepting_a_held_price_makes_it_live_with_the_staff_member_in_history(client, staff, held):
    act(client, "accept", held)
    held.refresh_from_db()
    offer = Offer.objects.get(pk=held.offer_id)
    assert (held.decision, held.decided_by) == ("accepted", staff)
    assert offer.usd_per_hour == held.proposed_usd_per_hour
    row = PriceHistory.objects.filter(offer=offer).latest("id")
    assert (row.changed_by, row.previous_usd_per_hour) == (staff, held.current_usd_per_hour)


def test_rejecting_a_held_price_keeps_the_current_one(client, staff, held):
    act(client, "reject", held)
    held.refresh_from_db()
    assert (held.decision, held.decided_by) == ("rejected", staff)
    assert Offer.objects.get(pk=held.offer_id).usd_per_hour == held.current_usd_per_hour


def test_the_refresh_runs_page_lists_runs_and_offers_refresh_and_import(client, staff):
    page = client.get("/admin/catalog/pricerefresh/").content.decode()
    assert "Refresh gpuhunt now" in page and "Import CSV" in page
    assert "load_catalog" in page  # the bundled load is a recorded run


def test_refresh_now_in_embedded_mode_records_a_failed_run_without_network(client, staff, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True  # embedded mode: no worker, the admin runs it
    settings.GPUHUNT_CATALOG_URL = "http://127.0.0.1:9/unreachable"
    settings.PRICE_FEED_TIMEOUT_S = 1
    before = dict(Offer.objects.values_list("id", "usd_per_hour"))
    response = client.post("/admin/catalog/pricerefresh/refresh/gpuhunt/", follow=True)
    assert "no price changed" in response.content.decode()
    run = PriceRefresh.objects.filter(source="gpuhunt").latest("started_at")
    assert run.status == "failed" and "could not be reached" in run.reason
    assert dict(Offer.objects.values_list("id", "usd_per_hour")) == before


def test_csv_import_in_the_admin_applies_valid_rows(client, staff):
    upload = SimpleUploadedFile(
        "prices.csv",
        b"provider,instance_type,region,zone,gpu,gpu_count,pricing_model,usd_per_hour,currency\n"
        b"acme,gpu-2x-h100,us-east,,H100-SXM,2,on_demand,5.10,USD\n",
    )
    response = client.post("/admin/catalog/pricerefresh/import-csv/", {"file": upload}, follow=True)
    assert "CSV import succeeded: 1 new" in response.content.decode()
    offer = Offer.objects.get(instance_type="gpu-2x-h100")
    assert offer.usd_per_hour == Decimal("5.1") and offer.history.count() == 1


def test_csv_import_refuses_a_file_that_is_not_text(client, staff):
    upload = SimpleUploadedFile("prices.csv", b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe")
    response = client.post("/admin/catalog/pricerefresh/import-csv/", {"file": upload})
    assert response.status_code == 200
    assert "not UTF-8 text" in response.content.decode()


def test_offers_page_says_when_each_source_last_refreshed(client, catalog):
    page = client.get("/offers/").content.decode()
    assert "Last successful refresh per source: bundled snapshot" in page
    assert "prices observed 2026-01-01" in page  # the snapshot's date, not the load's


def test_an_offer_page_shows_its_price_history_chart(client, catalog):
    offer = Offer.objects.first()
    page = client.get(f"/offers/{offer.pk}/").content.decode()
    assert '<svg xmlns="http://www.w3.org/2000/svg"' in page and "price-history" in page
    assert "history-table" in page


def test_a_gpu_page_shows_its_price_history_chart(client, catalog):
    page = client.get("/gpus/H100-SXM/").content.decode()
    assert "Cheapest H100 SXM offer, USD per GPU-hour" in page
