"""Rent against buy for one candidate (a GPU type and count): the owned GPU-hour's cost at the
stated utilisation, and the break-even utilisation against the cheapest offer of the same part
and count the team may rent, on demand and reserved for one and three years."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from advisor.domain.devices import Device, Offer
from advisor.domain.planning.ownership import (
    DEPRECIATION_YEARS,
    ENDS,
    HOSTING_USD_PER_KW_MONTH,
    PUE,
    SERVER_SHARE_FRACTION,
    USD_PER_KWH,
    UTILIZATION,
    OwnershipInputs,
    PurchasePrice,
    break_even_utilization,
    tco_usd_per_gpu_hour,
)
from advisor.domain.sizing.cluster_layout import cluster_offers, single_node
from advisor.domain.sizing.rental import ON_DEMAND, Rental, offer_choose

RESERVED_1Y, RESERVED_3Y = "reserved_1y", "reserved_3y"
RENTED_PRICING = (ON_DEMAND, RESERVED_1Y, RESERVED_3Y)

# Where each default comes from, as the answer states it (ownership.py cites each source).
INPUT_SOURCES = {
    "depreciation_years": f"{DEPRECIATION_YEARS} years: Nebius's GPU depreciation (CoreWeave "
    "six, Amazon five for part of its fleet)",
    "server_share_fraction": f"{SERVER_SHARE_FRACTION:.0%} of the GPU's price: Thinkmate's "
    "HGX H100 quote ($317,000 for eight, Aug 2024) less the H100s",
    "server_share_usd": "none: the fraction applies",
    "pue": f"{PUE}: Uptime Institute's 2023 industry average",
    "usd_per_kwh": f"${USD_PER_KWH}: EIA 2023 commercial average in Virginia",
    "hosting_usd_per_kw_month": f"${HOSTING_USD_PER_KW_MONTH}: CBRE H2 2024 wholesale "
    "colocation asking rate (250-500 kW), per kW of TDP",
    "hosting_usd_per_gpu_month": "none: the per-kW rate applies to the GPU's TDP",
    "utilization": f"{UTILIZATION:.0%}: an assumption",
}


@dataclass(frozen=True)
class BreakEven:
    pricing_model: str
    offer: Offer
    # low / typical / high purchase price: the utilisation above which owning costs less
    # (None: never within 100%).
    utilization: dict[str, float | None]


@dataclass(frozen=True)
class RentVsBuy:
    device: Device
    gpu_count: int
    price: PurchasePrice
    inputs: OwnershipInputs
    tdp_watts: float
    tco_usd_per_gpu_hour: dict[str, float]  # low / typical / high purchase price
    break_even: list[BreakEven]

    def sentence(self) -> str:
        """The break-even against the first rented offer, as the pages state it."""
        count = self.inputs.depreciation_years
        years = f"{count:g} year{'' if count == 1 else 's'}"
        if not self.break_even:
            return f"no rentable offer of {self.device.name} to compare buying with"
        first = self.break_even[0]
        rent = f"${first.offer.usd_per_gpu_hour:,.2f}/GPU-hour {_label(first.pricing_model)}"
        typical = first.utilization["typical"]
        if typical is None:
            low = first.utilization["low"]
            cheaper = (
                f" (at the low purchase price, ${self.price.at('low'):,.0f}, above {low:.0%})"
                if low is not None
                else ""
            )
            return (
                f"buying never pays off within 100% utilisation over {years} against {rent} "
                f"at the typical purchase price{cheaper}"
            )
        return (
            f"buying pays off above {typical:.0%} utilisation over {years} against {rent} "
            f"(at {_percent(first.utilization['low'])} to "
            f"{_percent(first.utilization['high'])} across the purchase price's range)"
        )


def _label(pricing_model: str) -> str:
    return {
        ON_DEMAND: "on demand",
        RESERVED_1Y: "reserved for 1 year",
        RESERVED_3Y: "reserved for 3 years",
    }[pricing_model]


def _percent(value: float | None) -> str:
    return "never" if value is None else f"{value:.0%}"


def _rented_offer(
    offers: Sequence[Offer], gpu_count: int, rental: Rental, pricing_model: str
) -> Offer | None:
    """What renting `gpu_count` GPUs costs per GPU-hour: the offer of that count, or for a
    cluster the cheapest per GPU-hour of the instances it is made of."""
    if single_node(gpu_count):
        return offer_choose(offers, gpu_count=gpu_count, rental=rental, pricing_model=pricing_model)
    nodes = cluster_offers(
        offers, gpu_count=gpu_count, tensor_parallel=1, rental=rental, pricing_model=pricing_model
    )
    return min(nodes, key=lambda offer: offer.usd_per_gpu_hour, default=None)


def rent_vs_buy(
    device: Device,
    gpu_count: int,
    offers: Sequence[Offer],
    *,
    rental: Rental,
    price: PurchasePrice | None,
    inputs: OwnershipInputs,
) -> RentVsBuy | None:
    """Owning `gpu_count` of `device` against renting them; None without a sourced purchase
    price or a catalogued TDP."""
    if price is None or not device.tdp_watts:
        return None
    tdp = device.tdp_watts
    breaks = []
    for pricing_model in RENTED_PRICING:
        offer = _rented_offer(offers, gpu_count, rental, pricing_model)
        if offer is not None:
            rent = offer.usd_per_gpu_hour
            at = {end: break_even_utilization(rent, price.at(end), tdp, inputs) for end in ENDS}
            breaks.append(BreakEven(pricing_model, offer, at))
    tco = {
        end: tco_usd_per_gpu_hour(price.at(end), tdp, inputs, inputs.utilization) for end in ENDS
    }
    return RentVsBuy(device, gpu_count, price, inputs, tdp, tco, breaks)


def _rounded(values: dict[str, float | None], digits: int) -> dict[str, float | None]:
    return {end: None if v is None else round(v, digits) for end, v in values.items()}


def rent_vs_buy_report(result: RentVsBuy | None) -> dict[str, Any] | None:
    """The answer's `rent_vs_buy`: every input with its value and whether it was defaulted."""
    if result is None:
        return None
    inputs, price = result.inputs, result.price
    return {
        "utilization": inputs.utilization,
        "tco_usd_per_gpu_hour": _rounded(result.tco_usd_per_gpu_hour, 4),
        "break_even_utilization": {
            b.pricing_model: {
                **_rounded(b.utilization, 4),
                "rent_usd_per_gpu_hour": round(b.offer.usd_per_gpu_hour, 4),
                "provider": b.offer.provider,
                "instance_type": b.offer.instance_type,
            }
            for b in result.break_even
        },
        "sentence": result.sentence(),
        "inputs": {
            name: {
                "value": getattr(inputs, name),
                "defaulted": name not in inputs.overridden,
                "default_source": INPUT_SOURCES[name],
            }
            for name in inputs.names()
        }
        | {
            "tdp_watts": {
                "value": result.tdp_watts,
                "defaulted": True,
                "default_source": "the catalogue",
            }
        },
        "purchase_price": {
            "low_usd": price.low_usd,
            "typical_usd": price.typical_usd,
            "high_usd": price.high_usd,
            "published": price.published,
            "read_on": price.read_on.isoformat(),
            "kind": price.kind,
            "confidence": price.confidence,
            "source_urls": list(price.source_urls),
            "notes": price.notes,
        },
        "left_out": "financing cost, staff, resale value, the host's power beyond the GPU's TDP, "
        "idle draw",
    }
