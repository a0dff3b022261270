"""Writes to the catalogue's GPUs, providers and offers. Every price change leaves a
PriceHistory row; a staff edit says who made it."""

import csv
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from datetime import datetime
from decimal import Decimal
from pathlib import Path

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from catalog.domain.quotes import PriceQuote
from catalog.domain.specs import GpuSpec
from catalog.domain.validation import needs_quarantine
from catalog.models import Gpu, Offer, PriceHistory, PriceRefresh, Provider, QuarantinedPrice

BUNDLED_DATA_DIR = Path(__file__).resolve().parent.parent / "data"
_GPU_SPEC_FIELDS = [f.name for f in fields(GpuSpec) if f.name != "canonical_key"]
_OFFER_ATTRIBUTES = ["gpu_id", "gpu_count", "accelerator_name", "vcpus", "ram_gib"]
UPDATE_BATCH = 50


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
    """Provider ids by key, creating the providers a feed names for the first time (with the
    bundled table's name, kind and pricing page when it knows them)."""
    keys = set(keys)
    known = {row["key"]: row for row in bundled_provider_rows()}
    ids = dict(Provider.objects.filter(key__in=keys).values_list("key", "id"))
    for key in sorted(keys - set(ids)):
        row = known.get(key) or {"name": key.replace("_", " ").title()}
        ids[key] = Provider.objects.create(key=key, **_provider_values(row)).pk
    return ids


def providers_sync() -> int:
    """The providers the bundled table lists, created with its name, kind and pricing page;
    an existing provider gets the table's value only where its own is empty (a staff edit in the
    admin stays). Returns how many changed."""
    changed = 0
    for row in bundled_provider_rows():
        values = _provider_values(row)
        provider, created = Provider.objects.get_or_create(key=row["key"], defaults=values)
        missing = {name: value for name, value in values.items() if not getattr(provider, name)}
        if missing and not created:
            Provider.objects.filter(pk=provider.pk).update(**missing)
            changed += 1
    return changed


def _provider_values(row: dict[str, str]) -> dict[str, str]:
    return {
        "name": row["name"],
        "website": row.get("website", ""),
        "kind": row.get("kind", ""),
        "kind_source": row.get("kind_source", ""),
        "pricing_url_template": row.get("pricing_url", ""),
    }


def bundled_provider_rows() -> list[dict[str, str]]:
    with (BUNDLED_DATA_DIR / "providers.csv").open(newline="") as table:
        return list(csv.DictReader(table))


@dataclass
class _OfferWrites:
    """What one upsert will write, decided before anything is written."""

    to_create: list[Offer] = field(default_factory=list)
    repriced: list[Offer] = field(default_factory=list)
    reshaped: list[Offer] = field(default_factory=list)
    seen_ids: list[int] = field(default_factory=list)
    # Seen at a price no older than the current one: this refresh now lists them.
    listed_ids: list[int] = field(default_factory=list)
    history: list[PriceHistory] = field(default_factory=list)
    quarantine: list[QuarantinedPrice] = field(default_factory=list)


def _latest_quotes(
    matched: Iterable[tuple[PriceQuote, str]], counts: OfferUpsertCounts
) -> dict[tuple[str, str, str, str, str], tuple[PriceQuote, str]]:
    """One quote per offer: the last one a feed lists wins."""
    latest: dict[tuple[str, str, str, str, str], tuple[PriceQuote, str]] = {}
    for quote, canonical_key in matched:
        if quote.offer_key in latest:
            counts.duplicates += 1
        latest[quote.offer_key] = (quote, canonical_key)
    return latest


def _new_offer(
    quote: PriceQuote,
    provider_id: int,
    attributes: dict,
    observed_at: datetime,
    refresh: PriceRefresh | None,
) -> Offer:
    return Offer(
        listed_by=refresh,
        provider_id=provider_id,
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


def _plan_existing(
    offer: Offer,
    quote: PriceQuote,
    attributes: dict,
    *,
    observed_at: datetime,
    refresh: PriceRefresh | None,
    writes: _OfferWrites,
    counts: OfferUpsertCounts,
) -> None:
    """Decide what changes on an offer the catalogue already has, and set it on the object."""
    writes.seen_ids.append(offer.pk)
    if observed_at < offer.price_observed_at:
        counts.older_than_current += 1
        counts.unchanged += 1
        return
    writes.listed_ids.append(offer.pk)
    price_changed = offer.usd_per_hour != quote.usd_per_hour
    if price_changed and refresh and needs_quarantine(offer.usd_per_hour, quote.usd_per_hour):
        writes.quarantine.append(
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
        return
    for name, value in attributes.items():
        setattr(offer, name, value)
    offer.updated_at = timezone.now()
    counts.updated += 1
    if attributes_changed:
        writes.reshaped.append(offer)
    if price_changed:
        writes.history.append(
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
        writes.repriced.append(offer)


def _write(writes: _OfferWrites, observed_at: datetime, refresh: PriceRefresh | None) -> None:
    with transaction.atomic():
        Offer.objects.bulk_create(writes.to_create, batch_size=1000)
        writes.history.extend(
            PriceHistory(
                offer=offer,
                usd_per_hour=offer.usd_per_hour,
                observed_at=observed_at,
                source=offer.source,
            )
            for offer in writes.to_create
        )
        # bulk_update writes CASE WHEN per row and field: small batches keep each statement
        # cheap, and only what changed is written.
        price_fields = ["usd_per_hour", "source", "price_observed_at", "updated_at"]
        Offer.objects.bulk_update(writes.repriced, price_fields, batch_size=UPDATE_BATCH)
        Offer.objects.bulk_update(
            writes.reshaped, [*_OFFER_ATTRIBUTES, "updated_at"], batch_size=UPDATE_BATCH
        )
        seen = Offer.objects.filter(pk__in=writes.seen_ids)
        seen.filter(last_seen_at__lt=observed_at).update(last_seen_at=observed_at)
        seen.filter(last_seen_at__isnull=True).update(last_seen_at=observed_at)
        if refresh is not None:
            Offer.objects.filter(pk__in=writes.listed_ids).update(listed_by=refresh)
        PriceHistory.objects.bulk_create(writes.history, batch_size=1000)
        QuarantinedPrice.objects.bulk_create(writes.quarantine, batch_size=1000)


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
    latest = _latest_quotes(matched, counts)
    provider_ids = providers_ensure(key[0] for key in latest)
    gpu_ids = dict(Gpu.objects.values_list("canonical_key", "id"))
    existing = {
        (o.provider.key, o.instance_type, o.region, o.zone, o.pricing_model): o
        for o in Offer.objects.filter(provider_id__in=provider_ids.values()).select_related(
            "provider"
        )
    }
    writes = _OfferWrites()
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
            writes.to_create.append(
                _new_offer(quote, provider_ids[quote.provider], attributes, observed_at, refresh)
            )
        else:
            _plan_existing(
                offer,
                quote,
                attributes,
                observed_at=observed_at,
                refresh=refresh,
                writes=writes,
                counts=counts,
            )
    _write(writes, observed_at, refresh)
    counts.created = len(writes.to_create)
    counts.history_rows = len(writes.history)
    counts.quarantined = len(writes.quarantine)
    return counts


def offer_price_set(
    *,
    offer: Offer,
    usd_per_hour: Decimal,
    previous_usd_per_hour: Decimal,
    user: AbstractBaseUser,
    reason: str = "",
) -> PriceHistory:
    """A staff member sets a price by hand: the offer changes and the audit trail says who,
    and why."""
    now = timezone.now()
    with transaction.atomic():
        offer.usd_per_hour = usd_per_hour
        offer.source = f"admin edit by {user.get_username()}"
        offer.price_observed_at = now
        # A person vouches for it now: live until a refresh of its feed omits it.
        offer.listed_by = None
        offer.save()
        return PriceHistory.objects.create(
            offer=offer,
            usd_per_hour=usd_per_hour,
            previous_usd_per_hour=previous_usd_per_hour,
            observed_at=now,
            source="admin edit",
            changed_by=user,
            reason=reason,
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
                reason="accepted from quarantine",
            )
        quarantined.decision = (
            QuarantinedPrice.Decision.ACCEPTED if accept else QuarantinedPrice.Decision.REJECTED
        )
        quarantined.decided_by = user
        quarantined.decided_at = timezone.now()
        quarantined.save(update_fields=["decision", "decided_by", "decided_at"])
