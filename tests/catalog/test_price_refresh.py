"""The refresh: a valid feed updates prices with history; no broken or hostile feed damages them."""

import copy
import json
import threading
from decimal import Decimal
from io import StringIO
from pathlib import Path

import httpx
import pytest
from django.core.management import CommandError, call_command
from django_celery_beat.models import PeriodicTask

from catalog.feeds.http import TransientFeedError
from catalog.models import Offer, PriceHistory, PriceRefresh, QuarantinedPrice
from catalog.services import (
    FetchedFeed,
    RefreshAlreadyRunning,
    price_refresh,
    price_source_fetcher,
)
from catalog.tasks import refresh_prices
from tests.catalog.feed_server import FeedServer, Route

PRICES = Path(__file__).resolve().parents[1] / "fixtures" / "prices"
BASE = "https://prices.example/api"


def azure_pages() -> list[dict]:
    return [json.loads((PRICES / f"azure_page{n}.json").read_text()) for n in (1, 2)]


def transport_for(pages: list[dict]) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        index = int(request.url.params.get("page", "1")) - 1
        return httpx.Response(
            200, json=json.loads(json.dumps(pages[index]).replace("{base}", BASE))
        )

    return httpx.MockTransport(handler)


def refresh_azure(pages: list[dict] | None = None, transport=None) -> PriceRefresh:
    fetch = price_source_fetcher(
        "azure", url=BASE, transport=transport or transport_for(pages or azure_pages())
    )
    return price_refresh(source="azure", fetch=fetch, triggered_by="test")


def prices() -> dict[int, Decimal]:
    return dict(Offer.objects.values_list("id", "usd_per_hour"))


@pytest.fixture
def loaded(catalog):
    """The bundled catalogue plus one good Azure refresh, as a running system has."""
    first = refresh_azure()
    assert first.status == "succeeded", first.reason
    return first


def test_a_valid_feed_creates_offers_with_one_history_row_each(catalog):
    before = PriceHistory.objects.count()
    run = refresh_azure()
    assert run.status == "succeeded"
    assert (run.seen, run.new, run.changed, run.rejected, run.unmatched) == (11, 11, 0, 0, 0)
    assert PriceHistory.objects.count() == before + 11
    offer = Offer.objects.get(
        provider__key="azure", instance_type="Standard_ND96isr_H100_v5", region="eastus"
    )
    assert offer.gpu.canonical_key == "H100-SXM" and offer.usd_per_gpu_hour == pytest.approx(12.29)


def test_a_second_identical_run_writes_no_history(loaded):
    before = PriceHistory.objects.count()
    run = refresh_azure()
    assert (run.status, run.changed, run.unchanged) == ("succeeded", 0, 11)
    assert PriceHistory.objects.count() == before


def test_each_changed_price_writes_exactly_one_history_row(loaded):
    pages = azure_pages()
    pages[0]["Items"][0]["retailPrice"] = 3.9  # NC24ads A100 v4, eastus: 3.673 -> 3.9
    pages[1]["Items"][3]["retailPrice"] = 0.55  # NC4as T4 v3: 0.526 -> 0.55
    before = PriceHistory.objects.count()
    run = refresh_azure(pages)
    assert (run.changed, run.unchanged) == (2, 9)
    assert PriceHistory.objects.count() == before + 2
    row = (
        PriceHistory.objects.order_by("-id")
        .filter(offer__instance_type="Standard_NC24ads_A100_v4")
        .first()
    )
    assert (row.previous_usd_per_hour, row.usd_per_hour) == (Decimal("3.673"), Decimal("3.9"))


def test_offers_missing_from_a_feed_are_kept_not_deleted(loaded):
    pages = azure_pages()
    del pages[1]["Items"][-1]  # the MI300X offer disappears
    before = Offer.objects.filter(provider__key="azure").count()
    refresh_azure(pages)
    assert Offer.objects.filter(provider__key="azure").count() == before
    gone = Offer.objects.get(instance_type="Standard_ND96is_MI300X_v5")
    assert (
        gone.last_seen_at
        < Offer.objects.get(instance_type="Standard_ND96isr_H100_v5", region="eastus").last_seen_at
    )


def error_transport(exception: Exception) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        raise exception

    return httpx.MockTransport(handler)


def mutate(change) -> list[dict]:
    pages = copy.deepcopy(azure_pages())
    change(pages)
    return pages


FAULTS = {
    "http 500": dict(transport=httpx.MockTransport(lambda r: httpx.Response(500, text="down"))),
    "timeout": dict(transport=error_transport(httpx.ReadTimeout("slow"))),
    "empty feed": dict(pages=[{"Items": [], "NextPageLink": None}]),
    "truncated json": dict(
        transport=httpx.MockTransport(
            lambda r: httpx.Response(200, content=b'{"Items": [{"armSkuName": "Standard_NC')
        )
    ),
    "half the offers missing": dict(pages=mutate(lambda p: p[1].update(Items=[]))),
    "zero and negative prices": dict(
        pages=mutate(
            lambda p: [
                item.update(retailPrice=value)
                for item, value in zip(p[0]["Items"][:3], (0, -1.5, 0), strict=True)
            ]
        )
    ),
    "wrong currency": dict(
        pages=mutate(
            lambda p: [item.update(currencyCode="EUR") for page in p for item in page["Items"]]
        )
    ),
    "wrong unit": dict(
        pages=mutate(
            lambda p: [item.update(unitOfMeasure="1/Month") for page in p for item in page["Items"]]
        )
    ),
}


@pytest.mark.parametrize("fault", FAULTS, ids=str)
def test_a_broken_feed_changes_no_price_and_says_why(loaded, fault):
    before, history = prices(), PriceHistory.objects.count()
    try:
        run = refresh_azure(**FAULTS[fault])
    except TransientFeedError:
        run = PriceRefresh.objects.filter(source="azure").latest("started_at")
    assert run.status == "failed"
    assert run.reason
    assert prices() == before
    assert PriceHistory.objects.count() == history


def test_a_price_jumping_100x_is_quarantined_not_applied(loaded):
    before = prices()
    run = refresh_azure(mutate(lambda p: p[1]["Items"][3].update(retailPrice=52.6)))  # T4 x100
    assert (run.status, run.quarantined) == ("succeeded", 1)
    assert prices() == before
    held = QuarantinedPrice.objects.get()
    assert (held.current_usd_per_hour, held.proposed_usd_per_hour) == (
        Decimal("0.526"),
        Decimal("52.6"),
    )


def test_a_50_mb_body_is_refused_by_the_size_cap(loaded, settings):
    server = FeedServer()
    server.routes["/api"] = Route(b"[" + b" " * (50 * 1024 * 1024) + b"]")
    base = server.start()
    try:
        before = prices()
        settings.PRICE_FEED_MAX_BYTES = 20 * 1024 * 1024
        fetch = price_source_fetcher("azure", url=f"{base}/api")
        run = price_refresh(source="azure", fetch=fetch, triggered_by="test")
        assert run.status == "failed" and "cap" in run.reason
        assert prices() == before
    finally:
        server.stop()


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_refreshes_of_one_source_one_runs_one_is_skipped():
    from catalog.services import catalog_load_bundled

    catalog_load_bundled()
    started, release = threading.Event(), threading.Event()
    outcomes: dict[str, object] = {}

    def slow_fetch() -> FetchedFeed:
        started.set()
        release.wait(10)
        return price_source_fetcher("azure", url=BASE, transport=transport_for(azure_pages()))()

    def first():
        from django.db import connection

        try:
            outcomes["first"] = price_refresh(source="azure", fetch=slow_fetch, triggered_by="a")
        finally:
            connection.close()

    thread = threading.Thread(target=first)
    thread.start()
    assert started.wait(10)
    with pytest.raises(RefreshAlreadyRunning):
        price_refresh(source="azure", fetch=slow_fetch, triggered_by="b")
    release.set()
    thread.join(20)
    assert outcomes["first"].status == "succeeded"
    assert PriceRefresh.objects.filter(source="azure").count() == 1


def test_an_abandoned_running_refresh_does_not_lock_forever(catalog):
    from datetime import timedelta

    from django.utils import timezone

    PriceRefresh.objects.create(
        source="azure", started_at=timezone.now() - timedelta(hours=2), triggered_by="dead worker"
    )
    assert refresh_azure().status == "succeeded"
    dead = PriceRefresh.objects.get(triggered_by="dead worker")
    assert dead.status == "failed" and "abandoned" in dead.reason


def test_the_beat_schedule_exists_after_migrate(db):
    tasks = PeriodicTask.objects.filter(task="catalog.tasks.refresh_prices")
    assert sorted(json.loads(t.args)[0] for t in tasks) == ["azure", "gpuhunt", "skypilot"]
    for task in tasks:
        assert task.interval.every == 6 and task.interval.period == "hours"
        assert 0 < task.expire_seconds < 6 * 3600
    assert len({t.start_time for t in tasks}) == 3  # staggered


def test_the_task_retries_transient_network_errors_only():
    assert refresh_prices.autoretry_for == (TransientFeedError,)
    assert refresh_prices.max_retries == 3 and refresh_prices.retry_backoff


def test_refresh_prices_command_prints_the_counts(catalog, tmp_path):
    csv_file = tmp_path / "prices.csv"
    csv_file.write_text(
        "provider,instance_type,region,zone,gpu,gpu_count,pricing_model,usd_per_hour,currency\n"
        "acme,gpu-8x-h100,us-east,,H100-SXM,8,on_demand,20.00,USD\n"
        "acme,gpu-1x-l4,us-east,,L4,1,spot,0.31,USD\n"
    )
    out = StringIO()
    call_command("refresh_prices", "--source", "csv", "--file", str(csv_file), stdout=out)
    assert "csv refresh succeeded: seen 2, accepted 2, new 2" in out.getvalue()
    assert Offer.objects.get(instance_type="gpu-8x-h100").provider.name == "Acme"


def test_refresh_prices_command_fails_loudly_and_changes_nothing_on_a_bad_csv(catalog, tmp_path):
    csv_file = tmp_path / "prices.csv"
    csv_file.write_text(
        "provider,instance_type,region,zone,gpu,gpu_count,pricing_model,usd_per_hour,currency\n"
        "acme,a,us,,H100-SXM,8,on_demand,-1,USD\nacme,b,us,,L4,1,spot,0.3,EUR\n"
    )
    before = prices()
    with pytest.raises(CommandError, match="no price changed"):
        call_command("refresh_prices", "--source", "csv", "--file", str(csv_file))
    assert prices() == before
