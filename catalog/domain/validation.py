"""Checks a feed's quotes before anything is written: a bad batch changes nothing.

A batch is refused whole when it is empty, when it lists far fewer offers than the source had
last time (a truncated or partial feed), or when too many of its rows are invalid. Single
prices that jump by more than a factor of three are held for a person to decide. A reserved
price above the on-demand price of the same instance in the same place is invalid: a
reservation is a discount, so such a row is a term's total misread or a wrong row.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal

from catalog.domain.matching import GpuMatcher
from catalog.domain.quotes import RESERVED_TERM_YEARS, PriceQuote, PricingModel

# Sane per-GPU-hour bounds: the cheapest consumer card on a marketplace is a few cents, the
# dearest datacenter GPU on demand is tens of dollars.
MIN_USD_PER_GPU_HOUR = Decimal("0.01")
MAX_USD_PER_GPU_HOUR = Decimal("150")
MAX_INVALID_SHARE = 0.20
MIN_SHARE_OF_PREVIOUS = 0.80
QUARANTINE_RATIO = Decimal(3)


class BatchRefused(Exception):
    """The whole batch is refused; the message says why."""


@dataclass(frozen=True)
class RejectedQuote:
    quote: PriceQuote
    reason: str


@dataclass
class ValidatedBatch:
    accepted: list[tuple[PriceQuote, str]] = field(default_factory=list)  # (quote, GPU key)
    rejected: list[RejectedQuote] = field(default_factory=list)  # invalid rows
    unmatched: list[RejectedQuote] = field(default_factory=list)  # GPU not in the catalogue


def _invalid_reason(quote: PriceQuote) -> str | None:
    if quote.currency.upper() != "USD":
        return f"currency {quote.currency!r}, not USD"
    if quote.unit.lower() not in {"hour", "1 hour", "hr", "h"}:
        return f"unit {quote.unit!r}, not per hour"
    if quote.gpu_count < 1:
        return f"GPU count {quote.gpu_count}"
    if not quote.usd_per_hour.is_finite() or quote.usd_per_hour <= 0:
        return f"price {quote.usd_per_hour} is not positive"
    per_gpu = quote.usd_per_hour / quote.gpu_count
    if not MIN_USD_PER_GPU_HOUR <= per_gpu <= MAX_USD_PER_GPU_HOUR:
        return (
            f"${per_gpu:.4f} per GPU-hour is outside the sane range "
            f"${MIN_USD_PER_GPU_HOUR}-${MAX_USD_PER_GPU_HOUR}"
        )
    return None


def _where(quote: PriceQuote) -> tuple[str, str, str, str]:
    return (quote.provider, quote.instance_type, quote.region, quote.zone)


def _above_on_demand_reason(quote: PriceQuote, on_demand: dict[tuple, PriceQuote]) -> str | None:
    """Why a reserved quote costs more per hour than renting the same instance on demand (the
    batch's valid on-demand quote), or None."""
    years = RESERVED_TERM_YEARS.get(quote.pricing_model)
    rented = on_demand.get(_where(quote))
    if years is None or rented is None or quote.usd_per_hour <= rented.usd_per_hour:
        return None
    where = f"{quote.instance_type} in {quote.region}{'/' + quote.zone if quote.zone else ''}"
    term = "1 year" if years == 1 else f"{years} years"
    return (
        f"{where}: reserved {term} at ${quote.usd_per_hour:.4f} per hour (the term's price "
        f"over its hours) is above its on-demand ${rented.usd_per_hour:.4f}; a reservation is "
        "a discount, so check the feed's term total and term"
    )


def validate_batch(
    quotes: Iterable[PriceQuote],
    *,
    matcher: GpuMatcher,
    source: str,
    previous_accepted: int | None,
    extra_invalid: int = 0,
) -> ValidatedBatch:
    """`extra_invalid`: rows the feed could not even parse into quotes; they count as invalid."""
    quotes = list(quotes)
    if not quotes:
        raise BatchRefused("the feed returned no offers")
    batch = ValidatedBatch()
    on_demand = {
        _where(quote): quote
        for quote in quotes
        if quote.pricing_model == PricingModel.ON_DEMAND and _invalid_reason(quote) is None
    }
    for quote in quotes:
        reason = _invalid_reason(quote) or _above_on_demand_reason(quote, on_demand)
        if reason:
            batch.rejected.append(RejectedQuote(quote, reason))
            continue
        match = matcher.match(source, quote)
        if match.canonical_key is None:
            batch.unmatched.append(RejectedQuote(quote, match.reason))
        else:
            batch.accepted.append((quote, match.canonical_key))
    invalid = len(batch.rejected) + extra_invalid
    rows = len(quotes) + extra_invalid
    invalid_share = invalid / rows
    if invalid_share > MAX_INVALID_SHARE:
        examples = "; ".join(sorted({r.reason for r in batch.rejected})[:3]) or "unparseable rows"
        raise BatchRefused(
            f"{invalid} of {rows} rows invalid ({invalid_share:.0%}, "
            f"limit {MAX_INVALID_SHARE:.0%}), e.g. {examples}"
        )
    if previous_accepted and len(batch.accepted) < MIN_SHARE_OF_PREVIOUS * previous_accepted:
        raise BatchRefused(
            f"only {len(batch.accepted)} usable offers, {previous_accepted} last time "
            f"(below {MIN_SHARE_OF_PREVIOUS:.0%}): a partial or truncated feed"
        )
    return batch


def needs_quarantine(current: Decimal, proposed: Decimal) -> bool:
    """A price that moves by more than 3x either way waits for a person."""
    return proposed > current * QUARANTINE_RATIO or proposed * QUARANTINE_RATIO < current
