"""A GPU's offers as an answer rather than a list: one group per provider, cheapest provider
first; in each group one row per instance and place, its on-demand and spot prices side by side.

Works on anything with the offer's attributes (`provider.name`, `instance_type`, `region`,
`zone`, `gpu_count`, `pricing_model`, `usd_per_hour`, `usd_per_gpu_hour`), so the catalogue's
rows go in as they are.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from catalog.domain.quotes import PricingModel


@dataclass
class InstanceRow:
    """One instance type in one region/zone of one provider, with both of its prices."""

    instance_type: str
    region: str
    zone: str
    gpu_count: int
    on_demand: Any = None
    spot: Any = None

    @property
    def cheapest_usd_per_gpu_hour(self) -> float:
        return min(float(offer.usd_per_gpu_hour) for offer in (self.on_demand, self.spot) if offer)


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
        return sum((row.on_demand is not None) + (row.spot is not None) for row in self.rows)


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
        if offer.pricing_model == PricingModel.SPOT.value:
            row.spot = offer
        else:
            row.on_demand = offer
    for group in groups.values():
        group.rows.sort(
            key=lambda r: (r.cheapest_usd_per_gpu_hour, r.instance_type, r.region, r.zone)
        )
        group.shown = min(rows_per_provider, len(group.rows))
    return sorted(groups.values(), key=lambda g: (g.cheapest_usd_per_gpu_hour, g.provider_name))
