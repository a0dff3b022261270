"""What every SkyPilot `vms.csv` shares: rows read by header, prices with their "no price"
sentinels, `GpuInfo` in either of its spellings, and quotes built from an instance and its
prices. `skypilot.py` (every cloud) and `skypilot_gcp.py` (GCP's split rows) build on it."""

import ast
import csv
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from catalog.domain.json_depth import JsonTooDeep, json_loads_limited
from catalog.domain.quotes import PriceQuote, PricingModel, usd_amount

# SkyPilot writes these where a cloud lists an instance without a usable price.
NO_PRICE_SENTINELS = {Decimal(0): "0.0 sentinel", Decimal("700.0"): "700.0 sentinel"}
PROVIDERS_WITH_TOTAL_MEMORY_PER_GPU_FIELD = {"vast"}

DUPLICATE_ROW = "exact duplicate of an earlier row (loaded once)"
CPU_ONLY = "no accelerator (CPU-only)"
SPOT_EQUALS_ON_DEMAND = "spot price equals on-demand (suspect feed value); spot not loaded"


@dataclass(frozen=True)
class SkippedRow:
    provider: str
    line: int
    instance_type: str
    accelerator_name: str
    reason: str  # one of a few stable sentences, so that rows can be counted by reason
    detail: str = ""  # what is particular to this row (a share, the line it repeats)


@dataclass
class ParsedFeed:
    quotes: list[PriceQuote] = field(default_factory=list)
    skipped: list[SkippedRow] = field(default_factory=list)
    rows_read: int = 0

    def extend(self, other: "ParsedFeed") -> None:
        self.quotes.extend(other.quotes)
        self.skipped.extend(other.skipped)
        self.rows_read += other.rows_read


def to_decimal(raw: str | None) -> Decimal | None:
    raw = (raw or "").strip()
    if not raw:
        return None
    try:
        value = Decimal(raw)
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def price_or_reason(raw: str | None) -> tuple[Decimal | None, str]:
    """The price in a price field, or why there is none ("empty", "700.0 sentinel", ...)."""
    if not (raw or "").strip():
        return None, "empty"
    value = to_decimal(raw)
    if value is None or value < 0:
        return None, f"unreadable {raw.strip()[:20]!r}"
    if value in NO_PRICE_SENTINELS:
        return None, NO_PRICE_SENTINELS[value]
    return usd_amount(value), ""


def gpu_info(raw: str | None) -> dict:
    raw = (raw or "").strip()
    if not raw.startswith("{"):
        return {"Gpus": [{"Name": raw}]} if raw else {}
    try:
        return json_loads_limited(raw)
    except JsonTooDeep:
        return {}
    except ValueError:  # not JSON: a Python literal, read below
        pass
    try:
        value = ast.literal_eval(re.sub(r"\bnull\b", "None", raw))
    except (ValueError, SyntaxError):
        return {}
    return value if isinstance(value, dict) else {}


def _per_gpu_memory_gib(provider: str, info: dict, gpu_count: int) -> Decimal | None:
    gpus = info.get("Gpus") or [{}]
    size_mib = to_decimal(str((gpus[0].get("MemoryInfo") or {}).get("SizeInMiB", "")))
    if not size_mib:
        return None
    if provider in PROVIDERS_WITH_TOTAL_MEMORY_PER_GPU_FIELD and gpu_count > 1:
        size_mib /= gpu_count
    if size_mib < 1024:  # a GB figure in a MiB field (RunPod)
        return size_mib
    return size_mib / 1024


@dataclass(frozen=True)
class Row:
    line: int
    values: dict[str, str]

    def get(self, column: str) -> str:
        return (self.values.get(column) or "").strip()

    def decimal(self, column: str) -> Decimal | None:
        return to_decimal(self.get(column))


@dataclass(frozen=True)
class Instance:
    """What one offer is: an instance in a place with its GPUs, whatever rows it came from."""

    instance_type: str
    accelerator: str
    gpu_count: int
    region: str
    zone: str
    info: dict
    vcpus: Decimal | None
    ram_gib: Decimal | None
    gpu_description: str = ""


Prices = dict[PricingModel, Decimal | None]


def quotes_for(provider: str, source: str, instance: Instance, prices: Prices) -> list[PriceQuote]:
    gpus = instance.info.get("Gpus") or [{}]
    return [
        PriceQuote(
            provider=provider,
            instance_type=instance.instance_type,
            region=instance.region,
            zone=instance.zone,
            accelerator_name=instance.accelerator,
            gpu_count=instance.gpu_count,
            pricing_model=model,
            usd_per_hour=price,
            source=source,
            gpu_memory_gib=_per_gpu_memory_gib(provider, instance.info, instance.gpu_count),
            gpu_description=instance.gpu_description or str(gpus[0].get("Name") or ""),
            vcpus=instance.vcpus,
            ram_gib=instance.ram_gib,
        )
        for model, price in prices.items()
        if price is not None
    ]


def skip(result: ParsedFeed, provider: str, row: Row, reason: str, detail: str = "") -> None:
    result.skipped.append(
        SkippedRow(
            provider, row.line, row.get("InstanceType"), row.get("AcceleratorName"), reason, detail
        )
    )


def read_rows(lines: Iterable[str], result: ParsedFeed, provider: str) -> list[Row]:
    """Every data row, less verbatim repeats (each counted in `skipped`, loaded once)."""
    rows, first_line = [], {}
    for number, values in enumerate(csv.DictReader(lines), start=2):
        result.rows_read += 1
        row = Row(number, values)
        key = tuple(values.items())
        if key in first_line:
            skip(result, provider, row, DUPLICATE_ROW, f"repeats line {first_line[key]}")
            continue
        first_line[key] = number
        rows.append(row)
    return rows


def row_prices(provider: str, row: Row, result: ParsedFeed) -> Prices | None:
    """The row's on-demand and spot prices; None (the row skipped, with why) when it has
    neither."""
    on_demand, why = price_or_reason(row.get("Price"))
    spot = price_or_reason(row.get("SpotPrice"))[0]
    if on_demand is None and spot is None:
        skip(result, provider, row, f"no price ({why})")
        return None
    if spot is not None and spot == on_demand:
        skip(result, provider, row, SPOT_EQUALS_ON_DEMAND)
        spot = None
    return {PricingModel.ON_DEMAND: on_demand, PricingModel.SPOT: spot}
