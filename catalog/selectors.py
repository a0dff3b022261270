"""Reads of the catalogue. Keyword-only, typed, named <thing>_<verb>."""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from django.db.models import Count, F, FloatField, Min, Q, QuerySet, Window
from django.db.models.functions import Cast, RowNumber

from catalog.domain.freshness import freshness_note, offer_freshness
from catalog.domain.quotes import PAY_AS_YOU_GO, PricingModel
from catalog.models import CatalogueVersion, Gpu, Offer, PriceHistory, PriceRefresh, PriceSource


def catalogue_version_get() -> int | None:
    """The catalogue's current version token (CatalogueVersion); None where the database keeps
    none, and then nothing read from the catalogue may be kept between requests."""
    return CatalogueVersion.objects.filter(pk=1).values_list("token", flat=True).first()


def gpu_memory_gib_by_key() -> dict[str, Decimal]:
    return dict(Gpu.objects.values_list("canonical_key", "memory_gib"))


def gpu_list() -> QuerySet[Gpu]:
    """Every GPU. The API's list and detail serialize no offer figure, so none is joined in;
    the GPU list page adds its counts and cheapest prices with gpus_with_offer_stats()."""
    return Gpu.objects.all()


@dataclass(frozen=True)
class CheapestPrice:
    """A GPU's cheapest price per GPU-hour at one pricing model, with how fresh it is."""

    usd_per_gpu_hour: float
    freshness: str
    price_observed_at: datetime

    @property
    def freshness_note(self) -> str:
        return freshness_note(self.freshness, self.price_observed_at)


@dataclass(frozen=True)
class GpuOfferStats:
    offer_count: int = 0  # every pricing model (reserved too), stale ones included
    on_demand: CheapestPrice | None = None  # of the offers that are not stale
    spot: CheapestPrice | None = None


def gpu_offer_stats_list() -> dict[int, GpuOfferStats]:
    """Per GPU id: how many offers it has, and the cheapest per-GPU-hour price of each pricing
    model among those not stale (a feed's later refresh no longer lists a stale one), with its
    freshness and observation date. A GPU without offers is absent."""
    counts: dict[int, int] = defaultdict(int)
    for gpu_id, count in (
        Offer.objects.order_by()
        .values("gpu_id")
        .annotate(count=Count("id"))
        .values_list("gpu_id", "count")
    ):
        counts[gpu_id] = count
    # The first row of each GPU and pricing model, by price, among the offers not stale: the
    # database ranks them, so only those rows come back.
    rank = Window(
        RowNumber(),
        partition_by=[F("gpu_id"), F("pricing_model")],
        order_by=[F("usd_per_gpu_hour").asc(), F("id").asc()],
    )
    rows = (
        Offer.objects.with_freshness()
        .filter(delisted=False)
        .annotate(rank=rank)
        .filter(rank=1)
        .values_list(
            "gpu_id", "pricing_model", "usd_per_gpu_hour", "price_observed_at", "listed_by_source"
        )
    )
    cheapest = {
        (gpu_id, pricing_model): CheapestPrice(
            usd_per_gpu_hour,
            offer_freshness(listed_by_source=listed_by_source, delisted=False),
            observed_at,
        )
        for gpu_id, pricing_model, usd_per_gpu_hour, observed_at, listed_by_source in rows
    }
    return {
        gpu_id: GpuOfferStats(
            count,
            cheapest.get((gpu_id, PricingModel.ON_DEMAND)),
            cheapest.get((gpu_id, PricingModel.SPOT)),
        )
        for gpu_id, count in counts.items()
    }


def offer_list() -> QuerySet[Offer]:
    """Offers with what every page and the API show of them: GPU, provider, freshness."""
    return Offer.objects.select_related("gpu", "provider").with_freshness()


# Offers equal in all of these are the same offer in another availability zone of the region.
ZONE_SIBLING_FIELDS = (
    "provider_id",
    "instance_type",
    "region",
    "gpu_id",
    "gpu_count",
    "pricing_model",
    "usd_per_hour",
)


def offers_merged_by_zone(offers: QuerySet[Offer]) -> QuerySet:
    """One row per offer and price across a region's zones: ZONE_SIBLING_FIELDS, the lowest
    offer id (`first_id`) and the zones' count (`zone_count`), in the order `offers` had
    (every field it can sort by is equal within a row; the id tie-break becomes `first_id`)."""
    ordering = [
        "first_id" if field.lstrip("-") == "id" else field for field in offers.query.order_by
    ]
    return (
        offers.order_by()
        .values(*ZONE_SIBLING_FIELDS)
        .annotate(first_id=Min("id"), zone_count=Count("id"))
        .order_by(*ordering)
    )


def offers_with_zones(*, rows: Sequence[dict]) -> list[Offer]:
    """The rows of offers_merged_by_zone() as offers (each its first), each with `zones`: the
    availability zones it is offered in at that price, sorted (empty where none is named)."""
    firsts = offer_list().in_bulk([row["first_id"] for row in rows])
    zones: dict[tuple, list[str]] = defaultdict(list)
    merged = [row for row in rows if row["zone_count"] > 1]
    if merged:
        same = Q()
        for row in merged:
            same |= Q(**{field: row[field] for field in ZONE_SIBLING_FIELDS})
        for sibling in Offer.objects.filter(same).values(*ZONE_SIBLING_FIELDS, "zone"):
            zones[tuple(sibling[field] for field in ZONE_SIBLING_FIELDS)].append(sibling["zone"])
    offers = []
    for row in rows:
        offer = firsts[row["first_id"]]
        key = tuple(row[field] for field in ZONE_SIBLING_FIELDS)
        offer.zones = sorted(z for z in zones.get(key, [offer.zone]) if z)
        offers.append(offer)
    return offers


def gpu_offers_list(*, gpu: Gpu) -> QuerySet[Offer]:
    return offer_list().filter(gpu=gpu).order_by("usd_per_gpu_hour", "provider__name", "id")


def offer_history_list(*, offer: Offer) -> QuerySet[PriceHistory]:
    return offer.history.select_related("changed_by").order_by("-observed_at", "-id")


def gpu_cheapest_per_gpu_hour_history(*, gpu: Gpu) -> list[tuple[datetime, float]]:
    """The lowest per-GPU-hour price any offer of this GPU paid by the hour (on-demand or
    spot; a reservation is paid for its whole term) had at each observation time."""
    rows = (
        PriceHistory.objects.filter(offer__gpu=gpu, offer__pricing_model__in=PAY_AS_YOU_GO)
        .values("observed_at")
        .annotate(
            cheapest=Min(
                Cast(F("usd_per_hour"), FloatField()) / F("offer__gpu_count"),
                output_field=FloatField(),
            )
        )
        .order_by("observed_at")
    )
    return [(row["observed_at"], row["cheapest"]) for row in rows]


def price_sources_last_refreshed() -> list[PriceRefresh]:
    """The latest successful run of each source, newest first."""
    latest = []
    for source in PriceSource.values:
        run = (
            PriceRefresh.objects.filter(source=source, status=PriceRefresh.Status.SUCCEEDED)
            .order_by("-finished_at")
            .first()
        )
        if run:
            latest.append(run)
    return sorted(latest, key=lambda run: run.finished_at, reverse=True)


def price_refreshes_failed_since_success() -> list[PriceRefresh]:
    """Per source, its latest run when that run failed: the prices of that source are from
    its last successful run (or the snapshot) until it succeeds again."""
    failed = []
    for source in PriceSource.values:
        run = PriceRefresh.objects.filter(source=source).order_by("-started_at", "-id").first()
        if run and run.status == PriceRefresh.Status.FAILED:
            failed.append(run)
    return failed
