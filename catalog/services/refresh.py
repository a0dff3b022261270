"""Price refreshes: lock a source, fetch it, validate the batch, write it in one transaction,
record the run. A feed that fails or looks implausible changes no price."""

import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from catalog.domain.matching import GpuMatcher, parse_alias_rules
from catalog.domain.mig import parse_mig_profiles
from catalog.domain.quotes import PriceQuote
from catalog.domain.specs import parse_gpu_specs
from catalog.domain.validation import BatchRefused, ValidatedBatch, validate_batch
from catalog.feeds import FETCHERS, FeedRequest, FetchedFeed
from catalog.feeds.http import FeedError, TransientFeedError
from catalog.feeds.skypilot import parse_vms_csv
from catalog.models import Offer, PriceRefresh, PriceSource, Provider
from catalog.selectors import gpu_memory_gib_by_key
from catalog.services.mig import mig_profiles_upsert
from catalog.services.offers import (
    BUNDLED_DATA_DIR,
    UpsertCounts,
    gpus_upsert,
    offers_upsert,
    providers_sync,
)

# A refresh still "running" after this long died with its worker: its lock is released.
ABANDONED_AFTER = timedelta(hours=1)
# Which alias rules name each source's GPUs (Azure and CSV use catalogue keys).
ALIAS_SOURCE = {
    PriceSource.BUNDLED: "skypilot",
    PriceSource.SKYPILOT: "skypilot",
    PriceSource.GPUHUNT: "gpuhunt",
    PriceSource.AZURE: "azure",
    PriceSource.CSV: "csv",
}


# Sources that list every offer of the providers they name: what they do not list is stale.
# The bundled snapshot is old by design and a staff CSV lists a few rows.
COVERING_SOURCES = frozenset({PriceSource.GPUHUNT, PriceSource.AZURE, PriceSource.SKYPILOT})


class RefreshAlreadyRunning(Exception):
    """Another refresh of the same source holds the lock; this one did nothing."""


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
        "rows_read": feed.rows_read
        if feed.rows_read is not None
        else len(feed.quotes) + len(feed.invalid),
        "unmatched": [
            {"provider": p, "accelerator": a, "reason": r, "count": n}
            for (p, a, r), n in unmatched.most_common()
        ],
        "unmatched_rows": [_unmatched_row(r.quote, r.reason) for r in batch.unmatched],
        "rejected": Counter(r.reason for r in batch.rejected).most_common(20)
        + [(reason, 1) for reason in feed.invalid[:20]],
        "skipped_rows": Counter(row.reason for row in feed.skipped).most_common(),
    }


def _unmatched_row(quote: PriceQuote, reason: str) -> dict:
    """One quote the matcher refused, as `load_catalog --json` lists it."""
    memory = quote.gpu_memory_gib
    return {
        "provider": quote.provider,
        "instance_type": quote.instance_type,
        "region": quote.region,
        "zone": quote.zone,
        "accelerator": quote.accelerator_name,
        "gpu_description": quote.gpu_description,
        "gpu_count": quote.gpu_count,
        "gpu_memory_gib": None if memory is None else float(round(memory, 2)),
        "pricing_model": str(quote.pricing_model),
        "usd_per_hour": str(quote.usd_per_hour),
        "reason": reason,
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
        stale = 0
        if source in COVERING_SOURCES:
            providers = Provider.objects.filter(
                key__in={quote.provider for quote, _ in batch.accepted}
            )
            run.providers.set(providers)
            # What it covers and did not list: withdrawn, as far as anyone can tell.
            stale = (
                Offer.objects.filter(provider__in=providers).exclude(listed_by__gte=run.pk).count()
            )
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
    with (data_dir / "mig_profiles.csv").open(newline="") as mig_file:
        mig_profiles = mig_profiles_upsert(specs=parse_mig_profiles(mig_file))
    providers_sync()
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
            feed.rows_read = (feed.rows_read or 0) + parsed.rows_read
        return feed

    run = price_refresh(
        source=PriceSource.BUNDLED, fetch=read_snapshot, triggered_by="load_catalog"
    )
    return CatalogLoadReport(
        gpus=gpus, refresh=run, excluded_files=excluded, mig_profiles=mig_profiles
    )


@dataclass
class CatalogLoadReport:
    gpus: UpsertCounts
    refresh: PriceRefresh
    excluded_files: dict[str, str]
    mig_profiles: UpsertCounts = field(default_factory=UpsertCounts)


def price_source_fetcher(
    source: str,
    *,
    url: str | None = None,
    lines: Iterable[str] | None = None,
    transport=None,
) -> Callable[[], FetchedFeed]:
    """How to read one source (a `FETCHERS` entry): the URL comes from settings unless given
    (tests, --url); a CSV import reads `lines`. `transport` lets tests serve recorded
    responses to httpx."""
    fetcher = FETCHERS.get(source)
    if fetcher is None:
        raise ValueError(f"unknown price source {source!r}")
    if source == PriceSource.CSV and lines is None:
        raise ValueError("a CSV import needs the file's lines")
    request = FeedRequest(
        url=url or (getattr(settings, fetcher.url_setting) if fetcher.url_setting else ""),
        data_dir=BUNDLED_DATA_DIR,
        timeout_s=settings.PRICE_FEED_TIMEOUT_S,
        max_bytes=settings.PRICE_FEED_MAX_BYTES,
        transport=transport,
        lines=lines,
    )
    return lambda: fetcher.read(request)
