"""A price quote: one provider's price for one instance in one place, as a feed reports it."""

from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from enum import StrEnum

# Prices are kept to a millionth of a dollar per hour: feeds write binary-float noise such as
# 0.36979999999999996, which would otherwise look like a price change on every refresh.
USD_QUANTUM = Decimal("0.000001")


def usd_amount(value: Decimal) -> Decimal:
    return value.quantize(USD_QUANTUM, rounding=ROUND_HALF_EVEN)


class PricingModel(StrEnum):
    ON_DEMAND = "on_demand"
    SPOT = "spot"
    # A reservation's price is paid for its whole term whether the instance runs or not; an
    # offer holds it as its hourly equivalent, the term's price over the term's hours.
    RESERVED_1Y = "reserved_1y"
    RESERVED_3Y = "reserved_3y"


# Paid for the hours used: what "cheapest on-demand / spot" and hourly renting compare.
PAY_AS_YOU_GO = (PricingModel.ON_DEMAND, PricingModel.SPOT)
RESERVED_TERM_YEARS = {PricingModel.RESERVED_1Y: 1, PricingModel.RESERVED_3Y: 3}
# 365 days of 24 hours, the year the clouds' pricing calculators bill (the planner's month is
# a twelfth of it): a term's price over its hours, whatever leap days it spans.
HOURS_PER_YEAR = 8760


def reserved_hourly_equivalent(term_usd: Decimal, years: int) -> Decimal:
    """A reservation's price for its whole term as USD per hour of the term."""
    return usd_amount(term_usd / (HOURS_PER_YEAR * years))


@dataclass(frozen=True)
class PriceQuote:
    provider: str
    instance_type: str
    region: str
    zone: str
    accelerator_name: str
    gpu_count: int
    pricing_model: PricingModel
    usd_per_hour: Decimal
    source: str
    # What the feed says about the GPU beyond its name; both help tell look-alikes apart.
    gpu_memory_gib: Decimal | None = None
    gpu_description: str = ""
    vcpus: Decimal | None = None
    ram_gib: Decimal | None = None
    # What the feed says the price is in; validation refuses anything but USD per hour.
    currency: str = "USD"
    unit: str = "hour"

    @property
    def offer_key(self) -> tuple[str, str, str, str, str]:
        """What identifies the offer across refreshes: the same instance, place and model."""
        return (self.provider, self.instance_type, self.region, self.zone, self.pricing_model)
