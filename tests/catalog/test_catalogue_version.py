"""The catalogue version: every write to GPUs, MIG profiles, providers and offers changes it,
whatever path wrote (the ORM, bulk writes, the refresh, the admin, raw SQL), a rolled-back
write never leaves a version that a later catalogue reuses, and what a process keeps keyed by
it (catalog/snapshots.py) is read again on the next request after a change."""

from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import Count, Min, Q
from django.utils import timezone

from catalog.domain.quotes import PriceQuote, PricingModel
from catalog.models import CatalogueVersion, Gpu, MigProfile, Offer, Provider
from catalog.selectors import catalogue_version_get
from catalog.services import offer_price_set, offers_upsert
from catalog.snapshots import CatalogueSnapshot


def _offer() -> Offer:
    return Offer.objects.select_related("gpu", "provider").order_by("id").first()


def _orm_save():
    offer = _offer()
    offer.usd_per_hour += Decimal("0.5")
    offer.save()


def _queryset_update():
    Offer.objects.filter(pk=_offer().pk).update(usd_per_hour=Decimal("1.5"))


def _bulk_update():
    offer = _offer()
    offer.usd_per_hour = Decimal("2.5")
    Offer.objects.bulk_update([offer], ["usd_per_hour"])


def _refresh_upsert():
    offer = _offer()
    quote = PriceQuote(
        provider=offer.provider.key,
        instance_type=offer.instance_type,
        region=offer.region,
        zone=offer.zone,
        accelerator_name=offer.accelerator_name,
        gpu_count=offer.gpu_count,
        pricing_model=PricingModel(offer.pricing_model),
        usd_per_hour=offer.usd_per_hour * 2,
        source="test feed",
        vcpus=offer.vcpus,
        ram_gib=offer.ram_gib,
    )
    counts = offers_upsert(matched=[(quote, offer.gpu.canonical_key)], observed_at=timezone.now())
    assert counts.price_changed == 1


def _admin_price_edit():
    offer = _offer()
    user = get_user_model().objects.create_user(username="pat", password=None, is_staff=True)
    offer_price_set(
        offer=offer,
        usd_per_hour=Decimal("9.75"),
        previous_usd_per_hour=offer.usd_per_hour,
        user=user,
    )


def _offer_delete():
    _offer().history.all().delete()
    _offer().quarantined_prices.all().delete()
    _offer().delete()


def _provider_rename():
    Provider.objects.filter(pk=_offer().provider_id).update(name="Renamed Cloud")


def _gpu_save():
    gpu = Gpu.objects.get(canonical_key="H100-SXM")
    gpu.memory_bandwidth_gb_s = 3000
    gpu.save()


def _mig_profile_delete():
    MigProfile.objects.filter(gpu__canonical_key="H100-SXM").delete()


def _raw_sql():
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Offer._meta.db_table} SET usd_per_hour = usd_per_hour + 1 WHERE id = %s",
            [_offer().pk],
        )


WRITES = [
    _orm_save,
    _queryset_update,
    _bulk_update,
    _refresh_upsert,
    _admin_price_edit,
    _offer_delete,
    _provider_rename,
    _gpu_save,
    _mig_profile_delete,
    _raw_sql,
]


@pytest.mark.parametrize("write", WRITES, ids=[w.__name__.lstrip("_") for w in WRITES])
def test_every_way_of_writing_the_catalogue_changes_its_version(catalog, write):
    before = catalogue_version_get()
    assert before is not None
    write()
    assert catalogue_version_get() not in {None, before}


def test_a_rolled_back_write_leaves_no_version_a_later_write_reuses(catalog):
    before = catalogue_version_get()
    with transaction.atomic():
        _queryset_update()
        rolled_back = catalogue_version_get()
        transaction.set_rollback(True)
    assert catalogue_version_get() == before
    _bulk_update()
    assert catalogue_version_get() not in {before, rolled_back}


def _offers_read(key) -> dict[int, Decimal]:
    return dict(Offer.objects.values_list("id", "usd_per_hour"))


def test_two_processes_each_see_a_price_change_on_their_next_read(catalog):
    """Two snapshots stand for two gunicorn workers: each keeps its copy, and each reads the
    catalogue again after another process (here: the admin's price edit) changed it."""
    worker_a, worker_b = CatalogueSnapshot(_offers_read), CatalogueSnapshot(_offers_read)
    first_a, first_b = worker_a.get(), worker_b.get()
    assert worker_a.get() is first_a and worker_b.get() is first_b  # kept while unchanged
    offer = _offer()
    _admin_price_edit()
    for worker, first in ((worker_a, first_a), (worker_b, first_b)):
        fresh = worker.get()
        assert fresh is not first
        assert fresh[offer.pk] == Decimal("9.75") != first[offer.pk]


def test_a_snapshot_taken_inside_a_rolled_back_write_is_not_kept(catalog):
    snapshot = CatalogueSnapshot(_offers_read)
    offer = _offer()
    committed = snapshot.get()[offer.pk]
    with transaction.atomic():
        _queryset_update()
        assert snapshot.get()[offer.pk] == Decimal("1.5")
        transaction.set_rollback(True)
    assert snapshot.get()[offer.pk] == committed
    _bulk_update()
    assert snapshot.get()[offer.pk] == Decimal("2.5")


def test_without_a_version_row_nothing_is_kept(catalog):
    reads = []
    snapshot = CatalogueSnapshot(lambda key: reads.append(key) or len(reads))
    CatalogueVersion.objects.all().delete()
    assert [snapshot.get(), snapshot.get()] == [1, 2]


def _expected_gpu_rows() -> dict[str, tuple[int, float | None, float | None]]:
    """What the GPU list page showed when it annotated the query (before the snapshot)."""
    rows = Gpu.objects.annotate(
        offer_count=Count("offers"),
        min_on_demand=Min("offers__usd_per_gpu_hour", filter=Q(offers__pricing_model="on_demand")),
        min_spot=Min("offers__usd_per_gpu_hour", filter=Q(offers__pricing_model="spot")),
    )
    return {gpu.canonical_key: (gpu.offer_count, gpu.min_on_demand, gpu.min_spot) for gpu in rows}


def _page_rows(client) -> dict[str, tuple[int, float | None, float | None]]:
    response = client.get("/")
    assert response.status_code == 200
    return {
        gpu.canonical_key: (
            gpu.offer_count,
            gpu.min_on_demand_usd_per_gpu_hour,
            gpu.min_spot_usd_per_gpu_hour,
        )
        for gpu in response.context["gpus"]
    }


def test_the_gpu_page_counts_and_cheapest_prices_follow_every_change(catalog, client):
    assert _page_rows(client) == _expected_gpu_rows()
    cheapest = Offer.objects.filter(gpu__canonical_key="H100-SXM").order_by("usd_per_gpu_hour")[0]
    Offer.objects.filter(pk=cheapest.pk).update(usd_per_hour=Decimal("0.01") * cheapest.gpu_count)
    rows = _page_rows(client)
    assert min(rows["H100-SXM"][1:]) == pytest.approx(0.01)
    assert rows == _expected_gpu_rows()
    _offer_delete()
    assert _page_rows(client) == _expected_gpu_rows()


def _h100_row_html(client, **query) -> str:
    page = client.get("/", query).content.decode()
    row_start = page.index('<a href="/gpus/H100-SXM/">')
    return page[row_start : page.index("</tr>", row_start)]


@pytest.mark.parametrize("query", [{}, {"ordering": "-memory_gib"}, {"vendor": "NVIDIA"}])
def test_the_rendered_gpu_rows_follow_a_price_change_on_the_next_request(catalog, client, query):
    """The unfiltered list's rows are rendered once per catalogue version and sort order."""
    before = _h100_row_html(client, **query)
    assert before == _h100_row_html(client, **query) and "$0.01" not in before
    cheapest = Offer.objects.filter(gpu__canonical_key="H100-SXM").order_by("usd_per_gpu_hour")[0]
    Offer.objects.filter(pk=cheapest.pk).update(usd_per_hour=Decimal("0.01") * cheapest.gpu_count)
    assert "$0.01" in _h100_row_html(client, **query)


@pytest.mark.parametrize("field", ["min_on_demand_usd_per_gpu_hour", "min_spot_usd_per_gpu_hour"])
@pytest.mark.parametrize("descending", [False, True])
def test_the_gpu_list_sorts_by_either_price_column_with_unpriced_gpus_last(
    catalog, client, field, descending
):
    """Before: one "From $/GPU-h" column that mixed spot into on-demand, and did not sort."""
    ordering = f"-{field}" if descending else field
    gpus = client.get("/", {"ordering": ordering}).context["gpus"]
    prices = [getattr(gpu, field) for gpu in gpus]
    priced = [price for price in prices if price is not None]
    assert priced == sorted(priced, reverse=descending) and len(priced) > 10
    assert prices[len(priced) :] == [None] * (len(prices) - len(priced))


def test_the_h100_shows_on_demand_and_spot_apart(catalog, client):
    [h100] = [gpu for gpu in client.get("/").context["gpus"] if gpu.canonical_key == "H100-SXM"]
    on_demand = Offer.objects.filter(gpu=h100, pricing_model="on_demand")
    spot = Offer.objects.filter(gpu=h100, pricing_model="spot")
    assert h100.min_on_demand_usd_per_gpu_hour == min(o.usd_per_gpu_hour for o in on_demand)
    assert h100.min_spot_usd_per_gpu_hour == min(o.usd_per_gpu_hour for o in spot)
    assert h100.min_spot_usd_per_gpu_hour < h100.min_on_demand_usd_per_gpu_hour
