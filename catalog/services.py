"""Writes to the catalogue. Every price change leaves a PriceHistory row."""

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from datetime import datetime
from decimal import Decimal
from pathlib import Path

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from catalog.domain.matching import GpuMatcher, parse_alias_rules
from catalog.domain.quotes import PriceQuote
from catalog.domain.specs import GpuSpec, parse_gpu_specs
from catalog.feeds.skypilot import SkippedRow, parse_vms_csv
from catalog.models import Gpu, Offer, PriceHistory, Provider
from catalog.selectors import gpu_memory_gib_by_key

BUNDLED_DATA_DIR = Path(__file__).resolve().parent / "data"
_GPU_SPEC_FIELDS = [f.name for f in fields(GpuSpec) if f.name != "canonical_key"]
_OFFER_ATTRIBUTES = ["gpu_id", "gpu_count", "accelerator_name", "vcpus", "ram_gib"]


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


@dataclass(frozen=True)
class UnmatchedQuote:
    provider: str
    instance_type: str
    accelerator_name: str
    reason: str


@dataclass
class CatalogLoadReport:
    gpus: UpsertCounts
    offers: OfferUpsertCounts = field(default_factory=OfferUpsertCounts)
    providers_created: int = 0
    quotes_read: int = 0
    unmatched: list[UnmatchedQuote] = field(default_factory=list)
    skipped_rows: list[SkippedRow] = field(default_factory=list)
    excluded_files: dict[str, str] = field(default_factory=dict)


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
            gpu.save(update_fields=changed)
            counts.updated += 1
        else:
            counts.unchanged += 1
    return counts


def offers_upsert(
    *, matched: Iterable[tuple[PriceQuote, str]], observed_at: datetime
) -> OfferUpsertCounts:
    """Insert new offers, update changed ones, append history for every price change.

    Queries do not grow with the number of rows: existing offers are read once per provider
    set, and writes go through bulk_create / bulk_update.
    """
    counts = OfferUpsertCounts()
    latest: dict[tuple[str, str, str, str, str], tuple[PriceQuote, str]] = {}
    for quote, canonical_key in matched:
        if quote.offer_key in latest:
            counts.duplicates += 1
        latest[quote.offer_key] = (quote, canonical_key)
    provider_ids = dict(
        Provider.objects.filter(key__in={key[0] for key in latest}).values_list("key", "id")
    )
    gpu_ids = dict(Gpu.objects.values_list("canonical_key", "id"))
    existing = {
        (
            offer.provider.key,
            offer.instance_type,
            offer.region,
            offer.zone,
            offer.pricing_model,
        ): offer
        for offer in Offer.objects.filter(provider_id__in=provider_ids.values()).select_related(
            "provider"
        )
    }
    to_create: list[Offer] = []
    to_update: list[Offer] = []
    history: list[PriceHistory] = []
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
                    **attributes,
                )
            )
            continue
        price_changed = offer.usd_per_hour != quote.usd_per_hour
        attributes_changed = any(getattr(offer, k) != v for k, v in attributes.items())
        if not price_changed and not attributes_changed:
            counts.unchanged += 1
            continue
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
        Offer.objects.bulk_create(to_create, batch_size=500)
        history.extend(
            PriceHistory(
                offer=offer,
                usd_per_hour=offer.usd_per_hour,
                observed_at=observed_at,
                source=offer.source,
            )
            for offer in to_create
        )
        Offer.objects.bulk_update(
            to_update,
            [*_OFFER_ATTRIBUTES, "usd_per_hour", "source", "price_observed_at", "updated_at"],
            batch_size=500,
        )
        PriceHistory.objects.bulk_create(history, batch_size=500)
    counts.created = len(to_create)
    counts.updated = len(to_update)
    counts.history_rows = len(history)
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


def catalog_load_bundled(*, data_dir: Path = BUNDLED_DATA_DIR) -> CatalogLoadReport:
    """Load the bundled GPU specs and the SkyPilot price snapshot. Idempotent."""
    with (data_dir / "gpus.csv").open(newline="") as specs_file:
        specs = parse_gpu_specs(specs_file)
    manifest = json.loads((data_dir / "skypilot" / "manifest.json").read_text())
    with transaction.atomic():
        report = CatalogLoadReport(gpus=gpus_upsert(specs=specs))
        with (data_dir / "gpu_aliases.csv").open(newline="") as rules_file:
            matcher = GpuMatcher(parse_alias_rules(rules_file), gpu_memory_gib_by_key())
        matched: list[tuple[PriceQuote, str]] = []
        for entry in manifest["files"]:
            provider, created = Provider.objects.get_or_create(
                key=entry["provider"],
                defaults={"name": entry["name"], "website": entry.get("website", "")},
            )
            report.providers_created += int(created)
            if entry.get("excluded"):
                report.excluded_files[entry["file"]] = entry["excluded"]
                continue
            source = f"{manifest['source']} {entry['provider']}@{entry['commit']}"
            with (data_dir / "skypilot" / entry["file"]).open(newline="") as feed_file:
                parsed = parse_vms_csv(feed_file, provider=provider.key, source=source)
            report.quotes_read += len(parsed.quotes)
            report.skipped_rows.extend(parsed.skipped)
            for quote in parsed.quotes:
                match = matcher.match("skypilot", quote)
                if match.canonical_key is None:
                    report.unmatched.append(
                        UnmatchedQuote(
                            quote.provider,
                            quote.instance_type,
                            quote.accelerator_name,
                            match.reason,
                        )
                    )
                else:
                    matched.append((quote, match.canonical_key))
        observed_at = datetime.fromisoformat(manifest["observed_at"])
        report.offers = offers_upsert(matched=matched, observed_at=observed_at)
    return report


def unmatched_summary(unmatched: Iterable[UnmatchedQuote]) -> list[tuple[str, str, str, int]]:
    """(provider, accelerator, reason, count), most frequent first: for people to read."""
    counts = Counter((u.provider, u.accelerator_name, u.reason) for u in unmatched)
    return [(*key, count) for key, count in counts.most_common()]
