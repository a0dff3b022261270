"""Owning a GPU against renting it: the total cost of ownership per used GPU-hour and the
utilisation above which owning costs less than a rented offer.

Per GPU, over the depreciation period (hours = years x 8,760):
  fixed USD per hour  = (purchase + server share) / hours + hosting per month x 12 / 8,760
  power USD per hour  = TDP kW x PUE x USD per kWh, paid only in the hours the GPU works
  TCO per used hour   = fixed / utilisation + power
so owning costs less than renting at r USD per GPU-hour above
  break-even utilisation = fixed / (r - power)
and never (within 100%) when that is above 1 or r does not even cover the power.

Left out: financing (the interest on the purchase), staff, resale value at the end, network
beyond the server's NICs, the host's own power beyond the GPU's TDP, and the GPU's idle draw.
"""

import csv
from dataclasses import dataclass, field, fields, replace
from datetime import date
from pathlib import Path

from advisor.domain.provenance import fitted

HOURS_PER_YEAR = 8760
MONTHS_PER_YEAR = 12
WATTS_PER_KW = 1000
PRICES_CSV = Path(__file__).resolve().parents[2] / "data" / "purchase_prices.csv"
ENDS = ("low", "typical", "high")

# Nebius depreciates its GPUs over four years, CoreWeave over six, and Amazon cut a subset of
# its servers from six to five in 2025 citing the pace of accelerators: four is the shortest
# life a GPU operator states, so the TCO does not lean on a long one.
DEPRECIATION_YEARS = 4
fitted(
    "DEPRECIATION_YEARS",
    fitted_on=(),
    source="Nebius's four-year GPU depreciation (CoreWeave six): "
    "https://bizety.com/2025/09/23/gpu-depreciation-coreweave-vs-nebius (read 2026-12-06)",
)
# The server around each GPU (chassis, CPUs, RAM, NICs, storage) as a share of the GPU's
# price: Thinkmate's HGX H100 quote, $317,000 for eight GPUs with 8 x 400 Gb/s InfiniBand
# (August 2024), is $39,625 a GPU, against $30,000 for the H100 alone (purchase_prices.csv).
SERVER_SHARE_FRACTION = 0.32
fitted(
    "SERVER_SHARE_FRACTION",
    fitted_on=(),
    source="Thinkmate HGX H100 quote $317k / 8 less a $30k H100, cited in "
    "https://docs.google.com/spreadsheets/d/1Ft3RbeZ-w43kYSiLfYc1vxO41mK5lmJpcPC9GOYHAWc "
    "(Aug 2024, read 2026-12-06)",
)
# Uptime Institute's industry-average PUE for 2023 (flat at 1.55-1.59 since 2020); a new
# hyperscale hall reaches 1.1-1.2, a colocation hall a team rents is closer to the average.
PUE = 1.58
fitted(
    "PUE",
    fitted_on=(),
    source="Uptime Institute, 2023 industry average PUE 1.58: https://intelligence."
    "uptimeinstitute.com/resource/large-data-centers-are-mostly-more-efficient-analysis-"
    "confirms (read 2026-12-06)",
)
# EIA's 2023 average commercial price in Virginia, the largest US data-centre market.
USD_PER_KWH = 0.0895
fitted(
    "USD_PER_KWH",
    fitted_on=(),
    source="EIA Electric Power Annual 2023, Virginia commercial 8.95 cents/kWh: "
    "https://www.eia.gov/electricity/annual/secrev-map.php (read 2026-12-06)",
)
# CBRE's average asking rate for 250-500 kW of wholesale colocation in the primary North
# American markets, H2 2024, per kW of IT load a month; power is metered on top.
HOSTING_USD_PER_KW_MONTH = 184.06
fitted(
    "HOSTING_USD_PER_KW_MONTH",
    fitted_on=(),
    source="CBRE North America Data Center Trends H2 2024, $184.06 per kW a month: "
    "https://www.cbre.com/insights/reports/north-america-data-center-trends-h2-2024 "
    "(read 2026-12-06)",
)
# The share of the depreciation period's hours the GPU does work a team would otherwise rent.
UTILIZATION = 0.6
fitted(
    "UTILIZATION",
    fitted_on=(),
    source="assumption: a team's GPUs busy three hours in five; the break-even is stated apart",
)


@dataclass(frozen=True, kw_only=True)
class PurchasePrice:
    """What one GPU costs to buy, as purchase_prices.csv sources it."""

    gpu_key: str
    low_usd: float
    typical_usd: float
    high_usd: float
    published: str  # when the figure was published, as precisely as the source says
    read_on: date
    kind: str  # vendor_list, oem_system_share, press_report, reseller_listing
    confidence: str  # high, medium, low
    source_urls: tuple[str, ...]
    notes: str

    def at(self, end: str) -> float:
        return {"low": self.low_usd, "typical": self.typical_usd, "high": self.high_usd}[end]


def purchase_prices_load(path: Path = PRICES_CSV) -> dict[str, PurchasePrice]:
    """The bundled purchase prices by catalogue GPU key."""
    with path.open(newline="") as handle:
        return {
            row["gpu_key"]: PurchasePrice(
                gpu_key=row["gpu_key"],
                low_usd=float(row["low_usd"]),
                typical_usd=float(row["typical_usd"]),
                high_usd=float(row["high_usd"]),
                published=row["published"],
                read_on=date.fromisoformat(row["read_on"]),
                kind=row["kind"],
                confidence=row["confidence"],
                source_urls=tuple(row["source_urls"].split("|")),
                notes=row["notes"],
            )
            for row in csv.DictReader(handle)
        }


@dataclass(frozen=True, kw_only=True)
class OwnershipInputs:
    """Every input of the TCO, each with its default; `overridden` names those a request set.
    A server share in USD, or hosting per GPU-month, replaces the fraction or the per-kW rate."""

    depreciation_years: float = DEPRECIATION_YEARS
    server_share_fraction: float = SERVER_SHARE_FRACTION
    server_share_usd: float | None = None
    pue: float = PUE
    usd_per_kwh: float = USD_PER_KWH
    hosting_usd_per_kw_month: float = HOSTING_USD_PER_KW_MONTH
    hosting_usd_per_gpu_month: float | None = None
    utilization: float = UTILIZATION
    overridden: frozenset[str] = field(default=frozenset())

    @classmethod
    def with_overrides(cls, **values: float) -> "OwnershipInputs":
        """The defaults with the given inputs replaced, remembered as overridden."""
        return replace(cls(), **values, overridden=frozenset(values))

    def server_usd(self, purchase_usd: float) -> float:
        if self.server_share_usd is not None:
            return self.server_share_usd
        return self.server_share_fraction * purchase_usd

    def hosting_usd_per_month(self, tdp_watts: float) -> float:
        if self.hosting_usd_per_gpu_month is not None:
            return self.hosting_usd_per_gpu_month
        return self.hosting_usd_per_kw_month * tdp_watts / WATTS_PER_KW

    def power_usd_per_hour(self, tdp_watts: float) -> float:
        """A working hour's electricity: the TDP, with the facility's overhead (PUE)."""
        return tdp_watts / WATTS_PER_KW * self.pue * self.usd_per_kwh

    def fixed_usd_per_hour(self, purchase_usd: float, tdp_watts: float) -> float:
        """What owning costs every hour of the depreciation period, used or not."""
        hours = self.depreciation_years * HOURS_PER_YEAR
        capital = (purchase_usd + self.server_usd(purchase_usd)) / hours
        hosting = self.hosting_usd_per_month(tdp_watts) * MONTHS_PER_YEAR / HOURS_PER_YEAR
        return capital + hosting

    def names(self) -> list[str]:
        return [f.name for f in fields(self) if f.name != "overridden"]


def tco_usd_per_gpu_hour(
    purchase_usd: float, tdp_watts: float, inputs: OwnershipInputs, utilization: float
) -> float:
    """What one used GPU-hour of an owned GPU costs at `utilization` (0 < u <= 1)."""
    if not 0 < utilization <= 1:
        raise ValueError(f"utilization must be in (0, 1], not {utilization}")
    fixed = inputs.fixed_usd_per_hour(purchase_usd, tdp_watts)
    return fixed / utilization + inputs.power_usd_per_hour(tdp_watts)


def break_even_utilization(
    rent_usd_per_gpu_hour: float, purchase_usd: float, tdp_watts: float, inputs: OwnershipInputs
) -> float | None:
    """The utilisation above which an owned GPU-hour costs less than a rented one; None when
    renting is cheaper at any utilisation up to 100%."""
    margin = rent_usd_per_gpu_hour - inputs.power_usd_per_hour(tdp_watts)
    if margin <= 0:
        return None
    threshold = inputs.fixed_usd_per_hour(purchase_usd, tdp_watts) / margin
    return threshold if threshold <= 1 else None
