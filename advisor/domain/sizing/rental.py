"""Where a team can rent: the providers, regions and kinds of market an answer may price on
and how many GPUs one layout may take; and which offer a candidate takes, at the workload's
pricing model (on_demand, spot, or any: the cheaper of the two, each answer saying which).

A team with an AWS commitment or an EU-only rule asks with `providers` or `regions`; an answer
never prices on an offer outside them, nor on a stale one (its feed no longer lists it).
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from catalog.domain.freshness import LIVE, STALE

if TYPE_CHECKING:  # devices.py reads sizing modules that read this one
    from advisor.domain.devices import Offer

ON_DEMAND, SPOT, ANY_PRICING = "on_demand", "spot", "any"
# What sizing prices on, and "any" chooses between: paid by the hour, never reserved.
PRICING_MODELS = (ON_DEMAND, SPOT)
# The catalogue's reserved offers, at the hourly equivalent of the term's price: a capacity
# plan bills a service that runs all year on them; sizing a run never does.
RESERVED_1Y, RESERVED_3Y = "reserved_1y", "reserved_3y"
BILLED_PRICING_MODELS = (*PRICING_MODELS, RESERVED_1Y, RESERVED_3Y)
MAX_GPUS = 8  # one instance: serving replicas, and training inside one node
# Training across nodes: the most GPUs a request may size (powers of two up to it).
MAX_CLUSTER_GPUS = 4096
# Offers within this share of the cheapest cost the same to a team: the tie goes to what is
# simpler to rent (not a marketplace, a live price).
OFFER_TIE_FRACTION = 0.03


@dataclass(frozen=True)
class Rental:
    providers: tuple[str, ...] = ()  # provider keys to use; empty: every provider
    exclude_providers: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()  # region prefixes ("us-", "europe-"), lower case; empty: any
    exclude_marketplaces: bool = False
    max_gpus: int = MAX_GPUS

    def allows(self, offer: "Offer") -> bool:
        """Whether the team may rent this offer (its price's age and model aside)."""
        if self.providers and offer.provider not in self.providers:
            return False
        if offer.provider in self.exclude_providers:
            return False
        if self.regions and not offer.region.lower().startswith(self.regions):
            return False
        return not (self.exclude_marketplaces and offer.is_marketplace)

    def notes(self) -> list[str]:
        """The constraints as the answer's assumptions state them."""
        notes = []
        if self.providers:
            notes.append(f"only offers of {', '.join(self.providers)} (providers)")
        if self.exclude_providers:
            notes.append(f"no offers of {', '.join(self.exclude_providers)} (exclude_providers)")
        if self.regions:
            notes.append(f"only regions starting {' or '.join(self.regions)} (regions)")
        if self.exclude_marketplaces:
            notes.append("no marketplaces, where hosts set prices (exclude_marketplaces)")
        if self.max_gpus < MAX_GPUS:
            notes.append(f"at most {self.max_gpus} GPUs (max_gpus)")
        if self.max_gpus > MAX_GPUS:
            notes.append(f"training up to {self.max_gpus:,} GPUs across nodes (max_gpus)")
        return notes


UNCONSTRAINED = Rental()


def pricing_models(pricing_model: str) -> tuple[str, ...]:
    """The offers' pricing models an answer reads."""
    return PRICING_MODELS if pricing_model == ANY_PRICING else (pricing_model,)


def offer_choose(
    offers: Iterable["Offer"], *, gpu_count: int, rental: Rental, pricing_model: str
) -> "Offer | None":
    """The offer a candidate of `gpu_count` GPUs is priced on: one the team may rent at the
    pricing model, whose price is not stale; within OFFER_TIE_FRACTION of the cheapest, a
    provider that is not a marketplace and a live price first."""
    models = pricing_models(pricing_model)
    constrained = rental != UNCONSTRAINED
    usable = [
        offer
        for offer in offers
        if offer.gpu_count == gpu_count
        and offer.pricing_model in models
        and offer.freshness != STALE
        and (not constrained or rental.allows(offer))
    ]
    return offer_cheapest(usable)


def offer_cheapest(usable: Sequence["Offer"]) -> "Offer | None":
    """Among rentable offers: within OFFER_TIE_FRACTION of the cheapest, a provider that is not
    a marketplace and a live price first."""
    if not usable:
        return None
    cheapest = min(offer.usd_per_hour for offer in usable)
    near = [offer for offer in usable if offer.usd_per_hour <= cheapest * (1 + OFFER_TIE_FRACTION)]
    return min(
        near,
        key=lambda offer: (offer.is_marketplace, offer.freshness != LIVE, offer.usd_per_hour),
    )
