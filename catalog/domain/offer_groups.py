"""A GPU's offers as an answer rather than a list: one group per provider, cheapest provider
first; in each group one row per instance and place, its on-demand, spot and reserved prices
side by side. What is cheapest is decided on the prices paid by the hour (on-demand and spot): a
reserved price is paid for a whole term and is only compared where a row has nothing else.

Works on anything with the offer's attributes (`provider.name`, `instance_type`, `region`,
`zone`, `gpu_count`, `pricing_model`, `usd_per_hour`, `usd_per_gpu_hour`), so the catalogue's
rows go in as they are.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from catalog.domain.quotes import PricingModel

# The row's attribute for each pricing model.
_SLOT = {
    PricingModel.ON_DEMAND.value: "on_demand",
    PricingModel.SPOT.value: "spot",
    PricingModel.RESERVED_1Y.value: "reserved_1y",
    PricingModel.RESERVED_3Y.value: "reserved_3y",
}


@dataclass
class InstanceRow:
    """One instance type in one region/zone of one provider, with each of its prices."""

    instance_type: str
    region: str
    zone: str
    gpu_count: int
    on_demand: Any = None
    spot: Any = None
    reserved_1y: Any = None
    reserved_3y: Any = None

    @property
    def offers(self) -> list[Any]:
        return [o for o in (self.on_demand, self.spot, self.reserved_1y, self.reserved_3y) if o]

    @property
    def first_offer(self) -> Any:
        """The offer the row's name links to: on-demand, else spot, else a reservation."""
        return self.offers[0]

    @property
    def cheapest_usd_per_gpu_hour(self) -> float:
        hourly = [offer for offer in (self.on_demand, self.spot) if offer] or self.offers
        return min(float(offer.usd_per_gpu_hour) for offer in hourly)


@dataclass
class ProviderGroup:
    provider_name: str
    provider_key: str
    rows: list[InstanceRow] = field(default_factory=list)
    shown: int = 0

    @property
    def cheapest_usd_per_gpu_hour(self) -> float:
        return self.rows[0].cheapest_usd_per_gpu_hour

    @property
    def visible_rows(self) -> list[InstanceRow]:
        return self.rows[: self.shown]

    @property
    def hidden_count(self) -> int:
        return len(self.rows) - self.shown

    @property
    def offer_count(self) -> int:
        return sum(len(row.offers) for row in self.rows)

    @property
    def has_reserved(self) -> bool:
        return any(row.reserved_1y or row.reserved_3y for row in self.rows)


def group_offers_by_provider(
    offers: Iterable[Any], *, rows_per_provider: int
) -> list[ProviderGroup]:
    """Providers ordered by their cheapest $/GPU-hour (name breaks ties); in each, instance rows
    by their cheapest price, the first `rows_per_provider` of them shown."""
    groups: dict[str, ProviderGroup] = {}
    rows: dict[tuple[str, str, str, str], InstanceRow] = {}
    for offer in offers:
        provider = offer.provider
        group = groups.setdefault(provider.key, ProviderGroup(provider.name, provider.key))
        key = (provider.key, offer.instance_type, offer.region, offer.zone)
        row = rows.get(key)
        if row is None:
            row = rows[key] = InstanceRow(
                offer.instance_type, offer.region, offer.zone, offer.gpu_count
            )
            group.rows.append(row)
        setattr(row, _SLOT[offer.pricing_model], offer)
    for group in groups.values():
        group.rows.sort(
            key=lambda r: (r.cheapest_usd_per_gpu_hour, r.instance_type, r.region, r.zone)
        )
        group.shown = min(rows_per_provider, len(group.rows))
    return sorted(groups.values(), key=lambda g: (g.cheapest_usd_per_gpu_hour, g.provider_name))
