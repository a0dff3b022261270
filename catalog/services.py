"""Writes to the catalogue. Every price change leaves a PriceHistory row; every refresh a
PriceRefresh record; a feed that fails or looks implausible changes nothing."""

import csv
import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from catalog.domain.matching import GpuMatcher, parse_alias_rules
from catalog.domain.quotes import PriceQuote
from catalog.domain.specs import GpuSpec, parse_gpu_specs
from catalog.domain.validation import BatchRefused, ValidatedBatch, needs_quarantine, validate_batch
from catalog.feeds.http import FeedError, TransientFeedError
from catalog.feeds.skypilot import SkippedRow, parse_vms_csv
from catalog.models import (
    Gpu,
    Offer,
    PriceHistory,
    PriceRefresh,
    PriceSource,
    Provider,
    QuarantinedPrice,
)
from catalog.selectors import gpu_memory_gib_by_key

BUNDLED_DATA_DIR = Path(__file__).resolve().parent / "data"
_GPU_SPEC_FIELDS = [f.name for f in fields(GpuSpec) if f.name != "canonical_key"]
_OFFER_ATTRIBUTES = ["gpu_id", "gpu_count", "accelerator_name", "vcpus", "ram_gib"]
# A refresh still "running" after this long died with its worker: its lock is released.
ABANDONED_AFTER = timedelta(hours=1)
UPDATE_BATCH = 50
# Which alias rules name each source's GPUs (Azure and CSV use catalogue keys).
ALIAS_SOURCE = {
    PriceSource.BUNDLED: "skypilot",
    PriceSource.SKYPILOT: "skypilot",
    PriceSource.GPUHUNT: "gpuhunt",
    PriceSource.AZURE: "azure",
    PriceSource.CSV: "csv",
}


class RefreshAlreadyRunning(Exception):
    """Another refresh of the same source holds the lock; this one did nothing."""


@dataclass
class UpsertCounts:
    created: int = 0
    updated: int = 0
    unchanged: int = 0


@dataclass
class OfferUpsertCounts(UpsertCounts):
    price_changed: int = 0
    history_rows: int = 0
    duplicates: int = 0
    quarantined: int = 0
    older_than_current: int = 0


@dataclass
class FetchedFeed:
    """What a source handed over: quotes, and rows it could not turn into quotes."""

    quotes: list[PriceQuote]
    skipped: list[SkippedRow] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)  # rows that failed to parse, with reasons
    observed_at: datetime | None = None


def gpus_upsert(*, specs: Iterable[GpuSpec]) -> UpsertCounts:
    counts = UpsertCounts()
    existing = {gpu.canonical_key: gpu for gpu in Gpu.objects.all()}
    for spec in specs:
        values = {name: getattr(spec, name) for name in _GPU_SPEC_FIELDS}
        values["aliases"] = list(spec.aliases)
        gpu = existing.get(spec.canonical_key)
        if gpu is None:
            Gpu.objects.create(canonical_key=spec.canonical_key, **values)
            counts.created += 1
            continue
        changed = [name for name, value in values.items() if getattr(gpu, name) != value]
        if changed:
            for name in changed:
                setattr(gpu, name, values[name])
            gpu.save(update_fields=[*changed, "updated_at"])
            counts.updated += 1
        else:
            counts.unchanged += 1
    return counts


def providers_ensure(keys: Iterable[str]) -> dict[str, int]:
    """Provider ids by key, creating the providers a feed names for the first time."""
    keys = set(keys)
    known = {row["key"]: row for row in _provider_table()}
    ids = dict(Provider.objects.filter(key__in=keys).values_list("key", "id"))
    for key in sorted(keys - set(ids)):
        row = known.get(key, {"name": key.replace("_", " ").title(), "website": ""})
        ids[key] = Provider.objects.create(key=key, name=row["name"], website=row["website"]).pk
    return ids


def _provider_table() -> list[dict[str, str]]:
    with (BUNDLED_DATA_DIR / "providers.csv").open(newline="") as table:
        return list(csv.DictReader(table))


def offers_upsert(
    *,
    matched: Iterable[tuple[PriceQuote, str]],
    observed_at: datetime,
    refresh: PriceRefresh | None = None,
) -> OfferUpsertCounts:
    """Insert new offers, update changed ones, append history for every price change.

    A quote older than the offer's current price does not overwrite it (a bundled snapshot
    never reverts a refreshed price). With a `refresh`, a price that jumps more than 3x is
    quarantined for a person instead. Queries do not grow with the number of rows: existing
    offers are read once, writes go through bulk_create / bulk_update / one UPDATE.
    """
    counts = OfferUpsertCounts()
    latest: dict[tuple[str, str, str, str, str], tuple[PriceQuote, str]] = {}
    for quote, canonical_key in matched:
        if quote.offer_key in latest:
            counts.duplicates += 1
        latest[quote.offer_key] = (quote, canonical_key)
    provider_ids = providers_ensure(key[0] for key in latest)
    gpu_ids = dict(Gpu.objects.values_list("canonical_key", "id"))
    existing = {
        (o.provider.key, o.instance_type, o.region, o.zone, o.pricing_model): o
        for o in Offer.objects.filter(provider_id__in=provider_ids.values()).select_related(
            "provider"
        )
    }
    to_create: list[Offer] = []
    to_update: list[Offer] = []
    history: list[PriceHistory] = []
    quarantine: list[QuarantinedPrice] = []
    seen_ids: list[int] = []
    repriced_ids: set[int] = set()
    reshaped_ids: set[int] = set()
    for key, (quote, canonical_key) in latest.items():
        attributes = {
            "gpu_id": gpu_ids[canonical_key],
            "gpu_count": quote.gpu_count,
            "accelerator_name": quote.accelerator_name,
            "vcpus": quote.vcpus,
            "ram_gib": quote.ram_gib,
        }
        offer = existing.get(key)
        if offer is None:
            to_create.append(
                Offer(
                    provider_id=provider_ids[quote.provider],
                    instance_type=quote.instance_type,
                    region=quote.region,
                    zone=quote.zone,
                    pricing_model=quote.pricing_model.value,
                    usd_per_hour=quote.usd_per_hour,
                    source=quote.source,
                    price_observed_at=observed_at,
                    last_seen_at=observed_at,
                    **attributes,
                )
            )
            continue
        seen_ids.append(offer.pk)
        if observed_at < offer.price_observed_at:
            counts.older_than_current += 1
            counts.unchanged += 1
            continue
        price_changed = offer.usd_per_hour != quote.usd_per_hour
        if price_changed and refresh and needs_quarantine(offer.usd_per_hour, quote.usd_per_hour):
            quarantine.append(
                QuarantinedPrice(
                    offer=offer,
                    refresh=refresh,
                    current_usd_per_hour=offer.usd_per_hour,
                    proposed_usd_per_hour=quote.usd_per_hour,
                    observed_at=observed_at,
                    source=quote.source,
                )
            )
            price_changed = False
        attributes_changed = any(getattr(offer, k) != v for k, v in attributes.items())
        if not price_changed and not attributes_changed:
            counts.unchanged += 1
            continue
        if attributes_changed:
            reshaped_ids.add(offer.pk)
        if price_changed:
            repriced_ids.add(offer.pk)
        for name, value in attributes.items():
            setattr(offer, name, value)
        if price_changed:
            history.append(
                PriceHistory(
                    offer=offer,
                    usd_per_hour=quote.usd_per_hour,
                    previous_usd_per_hour=offer.usd_per_hour,
                    observed_at=observed_at,
                    source=quote.source,
                )
            )
            offer.usd_per_hour = quote.usd_per_hour
            offer.source = quote.source
            offer.price_observed_at = observed_at
            counts.price_changed += 1
        offer.updated_at = timezone.now()
        to_update.append(offer)
    with transaction.atomic():
        Offer.objects.bulk_create(to_create, batch_size=1000)
        history.extend(
            PriceHistory(
                offer=offer,
                usd_per_hour=offer.usd_per_hour,
                observed_at=observed_at,
                source=offer.source,
            )
            for offer in to_create
        )
        # bulk_update writes CASE WHEN per row and field: small batches keep each statement
        # cheap, and only what changed is written.
        price_fields = ["usd_per_hour", "source", "price_observed_at", "updated_at"]
        repriced = [o for o in to_update if o.pk in repriced_ids]
        reshaped = [o for o in to_update if o.pk in reshaped_ids]
        Offer.objects.bulk_update(repriced, price_fields, batch_size=UPDATE_BATCH)
        Offer.objects.bulk_update(
            reshaped, [*_OFFER_ATTRIBUTES, "updated_at"], batch_size=UPDATE_BATCH
        )
        Offer.objects.filter(pk__in=seen_ids, last_seen_at__lt=observed_at).update(
            last_seen_at=observed_at
        )
        Offer.objects.filter(pk__in=seen_ids, last_seen_at__isnull=True).update(
            last_seen_at=observed_at
        )
        PriceHistory.objects.bulk_create(history, batch_size=1000)
        QuarantinedPrice.objects.bulk_create(quarantine, batch_size=1000)
    counts.created = len(to_create)
    counts.updated = len(to_update)
    counts.history_rows = len(history)
    counts.quarantined = len(quarantine)
    return counts


def offer_price_set(
    *, offer: Offer, usd_per_hour: Decimal, previous_usd_per_hour: Decimal, user: AbstractBaseUser
) -> PriceHistory:
    """A staff member sets a price by hand: the offer changes and the audit trail says who."""
    now = timezone.now()
    with transaction.atomic():
        offer.usd_per_hour = usd_per_hour
        offer.source = f"admin edit by {user.get_username()}"
        offer.price_observed_at = now
        offer.save()
        return PriceHistory.objects.create(
            offer=offer,
            usd_per_hour=usd_per_hour,
            previous_usd_per_hour=previous_usd_per_hour,
            observed_at=now,
            source="admin edit",
            changed_by=user,
        )


def quarantined_price_decide(
    *, quarantined: QuarantinedPrice, accept: bool, user: AbstractBaseUser
) -> None:
    """Staff accept (the price goes live, with history naming them) or reject a held price."""
    if quarantined.decision != QuarantinedPrice.Decision.PENDING:
        return
    with transaction.atomic():
        if accept:
            offer = quarantined.offer
            offer_price_set(
                offer=offer,
                usd_per_hour=quarantined.proposed_usd_per_hour,
                previous_usd_per_hour=offer.usd_per_hour,
                user=user,
            )
        quarantined.decision = (
            QuarantinedPrice.Decision.ACCEPTED if accept else QuarantinedPrice.Decision.REJECTED
        )
        quarantined.decided_by = user
        quarantined.decided_at = timezone.now()
        quarantined.save(update_fields=["decision", "decided_by", "decided_at"])


def _matcher() -> GpuMatcher:
    with (BUNDLED_DATA_DIR / "gpu_aliases.csv").open(newline="") as rules_file:
        return GpuMatcher(parse_alias_rules(rules_file), gpu_memory_gib_by_key())


def _previous_accepted(source: str) -> int | None:
    last = (
        PriceRefresh.objects.filter(source=source, status=PriceRefresh.Status.SUCCEEDED)
        .order_by("-started_at")
        .first()
    )
    return last.accepted if last else None


def _start(source: str, triggered_by: str) -> PriceRefresh:
    PriceRefresh.objects.filter(
        source=source,
        status=PriceRefresh.Status.RUNNING,
        started_at__lt=timezone.now() - ABANDONED_AFTER,
    ).update(
        status=PriceRefresh.Status.FAILED,
        finished_at=timezone.now(),
        reason="abandoned: still running after an hour (the worker died)",
    )
    try:
        with transaction.atomic():
            return PriceRefresh.objects.create(source=source, triggered_by=triggered_by)
    except IntegrityError as error:
        raise RefreshAlreadyRunning(f"a {source} refresh is already running") from error


def _fail(run: PriceRefresh, reason: str, **counts: int) -> PriceRefresh:
    for name, value in counts.items():
        setattr(run, name, value)
    run.status = PriceRefresh.Status.FAILED
    run.reason = reason
    run.finished_at = timezone.now()
    run.save()
    return run


def _summary(batch: ValidatedBatch, feed: FetchedFeed) -> dict:
    unmatched = Counter(
        (r.quote.provider, r.quote.accelerator_name, r.reason) for r in batch.unmatched
    )
    return {
        "unmatched": [
            {"provider": p, "accelerator": a, "reason": r, "count": n}
            for (p, a, r), n in unmatched.most_common()
        ],
        "rejected": Counter(r.reason for r in batch.rejected).most_common(20)
        + [(reason, 1) for reason in feed.invalid[:20]],
        "skipped_rows": Counter(row.reason for row in feed.skipped).most_common(),
    }


def price_refresh(
    *, source: str, fetch: Callable[[], FetchedFeed], triggered_by: str
) -> PriceRefresh:
    """Run one source: lock, fetch, validate, write in one transaction, record the run.

    Raises RefreshAlreadyRunning (nothing done) and re-raises a feed's TransientFeedError after
    recording the failed run, so that a task can retry. Any other failure is recorded and
    returned as a failed run; no price changes.
    """
    run = _start(source, triggered_by)
    try:
        feed = fetch()
    except TransientFeedError as error:
        _fail(run, str(error))
        raise
    except FeedError as error:
        return _fail(run, str(error))
    seen = len(feed.quotes) + len(feed.invalid)
    try:
        batch = validate_batch(
            feed.quotes,
            matcher=_matcher(),
            source=ALIAS_SOURCE[source],
            previous_accepted=_previous_accepted(source),
            extra_invalid=len(feed.invalid),
        )
    except BatchRefused as error:
        return _fail(run, str(error), seen=seen)
    observed_at = feed.observed_at or run.started_at
    with transaction.atomic():
        counts = offers_upsert(matched=batch.accepted, observed_at=observed_at, refresh=run)
        providers = {quote.provider for quote, _ in batch.accepted}
        stale = Offer.objects.filter(
            provider__key__in=providers,
            last_seen_at__lt=timezone.now() - timedelta(hours=settings.PRICE_STALE_AFTER_HOURS),
        ).count()
        run.status = PriceRefresh.Status.SUCCEEDED
        run.finished_at = timezone.now()
        run.seen = seen
        run.accepted = len(batch.accepted)
        run.new = counts.created
        run.changed = counts.price_changed
        run.unchanged = counts.unchanged
        run.quarantined = counts.quarantined
        run.stale = stale
        run.rejected = len(batch.rejected) + len(feed.invalid)
        run.unmatched = len(batch.unmatched)
        run.details = _summary(batch, feed)
        run.save()
    return run


def catalog_load_bundled(*, data_dir: Path = BUNDLED_DATA_DIR) -> "CatalogLoadReport":
    """Load the bundled GPU specs and the SkyPilot price snapshot. Idempotent."""
    with (data_dir / "gpus.csv").open(newline="") as specs_file:
        specs = parse_gpu_specs(specs_file)
    manifest = json.loads((data_dir / "skypilot" / "manifest.json").read_text())
    gpus = gpus_upsert(specs=specs)
    providers_ensure(row["key"] for row in _provider_table())
    excluded = {e["file"]: e["excluded"] for e in manifest["files"] if e.get("excluded")}

    def read_snapshot() -> FetchedFeed:
        feed = FetchedFeed(quotes=[], observed_at=datetime.fromisoformat(manifest["observed_at"]))
        for entry in manifest["files"]:
            if entry["file"] in excluded:
                continue
            source = f"{manifest['source']} {entry['provider']}@{entry['commit']}"
            with (data_dir / "skypilot" / entry["file"]).open(newline="") as feed_file:
                parsed = parse_vms_csv(feed_file, provider=entry["provider"], source=source)
            feed.quotes.extend(parsed.quotes)
            feed.skipped.extend(parsed.skipped)
        return feed

    run = price_refresh(
        source=PriceSource.BUNDLED, fetch=read_snapshot, triggered_by="load_catalog"
    )
    return CatalogLoadReport(gpus=gpus, refresh=run, excluded_files=excluded)


@dataclass
class CatalogLoadReport:
    gpus: UpsertCounts
    refresh: PriceRefresh
    excluded_files: dict[str, str]


def price_source_fetcher(
    source: str,
    *,
    url: str | None = None,
    lines: Iterable[str] | None = None,
    transport=None,
) -> Callable[[], FetchedFeed]:
    """How to read one source: the URL comes from settings unless given (tests, --url);
    a CSV import reads `lines`. `transport` lets tests serve recorded responses to httpx."""
    from catalog.feeds.azure import fetch_azure, parse_sku_table
    from catalog.feeds.csv_import import parse_price_csv
    from catalog.feeds.gpuhunt_catalog import fetch_gpuhunt
    from catalog.feeds.http import new_client
    from catalog.feeds.skypilot import fetch_skypilot

    max_bytes = settings.PRICE_FEED_MAX_BYTES

    def client():
        return new_client(settings.PRICE_FEED_TIMEOUT_S, transport=transport)

    if source == PriceSource.GPUHUNT:

        def fetch() -> FetchedFeed:
            with client() as http:
                return FetchedFeed(
                    fetch_gpuhunt(http, url or settings.GPUHUNT_CATALOG_URL, max_bytes=max_bytes)
                )
    elif source == PriceSource.AZURE:

        def fetch() -> FetchedFeed:
            with (BUNDLED_DATA_DIR / "azure_gpu_skus.csv").open(newline="") as table:
                skus = parse_sku_table(table)
            with client() as http:
                quotes = fetch_azure(
                    http, url or settings.AZURE_PRICES_URL, skus, max_bytes=max_bytes
                )
            return FetchedFeed(quotes)
    elif source == PriceSource.SKYPILOT:

        def fetch() -> FetchedFeed:
            manifest = json.loads((BUNDLED_DATA_DIR / "skypilot" / "manifest.json").read_text())
            files = {
                e["provider"]: e["upstream_path"]
                for e in manifest["files"]
                if not e.get("excluded")
            }
            with client() as http:
                parsed = fetch_skypilot(
                    http, url or settings.SKYPILOT_CATALOG_URL, files, max_bytes=max_bytes
                )
            return FetchedFeed(parsed.quotes, skipped=parsed.skipped)
    elif source == PriceSource.CSV:
        if lines is None:
            raise ValueError("a CSV import needs the file's lines")

        def fetch() -> FetchedFeed:
            from catalog.feeds.csv_import import CsvFormatError

            try:
                parsed = parse_price_csv(lines, source="staff CSV import")
            except CsvFormatError as error:
                raise FeedError(str(error)) from error
            return FetchedFeed(parsed.quotes, invalid=parsed.errors)
    else:
        raise ValueError(f"unknown price source {source!r}")
    return fetch
