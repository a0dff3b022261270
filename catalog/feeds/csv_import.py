"""Staff CSV import: prices in the documented column format, read into price quotes.

Columns (header row required, any order): provider, instance_type, region, zone, gpu,
gpu_count, pricing_model (on_demand | spot), usd_per_hour, currency (USD), and optionally
vcpus, ram_gib, gpu_memory_gib. `gpu` is a catalogue key (H100-SXM) or a spelling the alias
rules know for source "csv"; `zone` may be empty.
"""

import csv
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from catalog.domain.quotes import PAY_AS_YOU_GO, PriceQuote, usd_amount

REQUIRED = (
    "provider",
    "instance_type",
    "region",
    "gpu",
    "gpu_count",
    "pricing_model",
    "usd_per_hour",
    "currency",
)


class CsvFormatError(ValueError):
    pass


@dataclass
class ParsedCsv:
    quotes: list[PriceQuote] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # "line 7: usd_per_hour 'abc' is not a number"


def _number(row: dict, column: str, line: int, errors: list[str]) -> Decimal | None:
    raw = (row.get(column) or "").strip()
    if not raw:
        return None
    try:
        value = Decimal(raw)
    except InvalidOperation:
        errors.append(f"line {line}: {column} {raw!r} is not a number")
        return None
    return value if value.is_finite() else None


def parse_price_csv(lines: Iterable[str], *, source: str) -> ParsedCsv:
    reader = csv.DictReader(lines)
    missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
    if missing:
        raise CsvFormatError(f"missing columns: {', '.join(missing)} (see the documented format)")
    result = ParsedCsv()
    for line, row in enumerate(reader, start=2):
        errors: list[str] = []
        price = _number(row, "usd_per_hour", line, errors)
        count = _number(row, "gpu_count", line, errors)
        # Reserved prices come from feeds that give the term's price, not from a staff sheet.
        raw_model = (row.get("pricing_model") or "").strip()
        model = next((m for m in PAY_AS_YOU_GO if m == raw_model), None)
        if model is None:
            errors.append(f"line {line}: pricing_model must be on_demand or spot")
        if price is None and not errors:
            errors.append(f"line {line}: usd_per_hour is empty")
        if count is None or count != int(count) or count < 1:
            errors.append(f"line {line}: gpu_count must be a whole number of GPUs")
        if errors:
            result.errors.extend(errors)
            continue
        result.quotes.append(
            PriceQuote(
                provider=row["provider"].strip(),
                instance_type=row["instance_type"].strip(),
                region=row["region"].strip(),
                zone=(row.get("zone") or "").strip(),
                accelerator_name=row["gpu"].strip(),
                gpu_count=int(count),
                pricing_model=model,
                usd_per_hour=usd_amount(price),
                source=source,
                gpu_memory_gib=_number(row, "gpu_memory_gib", line, []),
                vcpus=_number(row, "vcpus", line, []),
                ram_gib=_number(row, "ram_gib", line, []),
                currency=(row.get("currency") or "").strip(),
            )
        )
    return result
