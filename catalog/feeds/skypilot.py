"""SkyPilot catalogue `vms.csv` files (one per cloud) -> PriceQuote.

Columns differ in order from cloud to cloud, so rows are read by header. Quirks handled here,
each documented in the SkyPilot catalogue and our `catalog/data/README.md`:
- an empty price, `0` and `700.0` (a sentinel) mean "no price";
- GCP lists the host VM and its GPUs as separate rows: an offer is the sum of both;
- `GpuInfo` is a Python-literal dict in most files and JSON in others;
- RunPod writes GB into the `SizeInMiB` field; Vast writes the total over all GPUs there.
"""

import ast
import csv
import io
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

import httpx

from catalog.domain.json_depth import JsonTooDeep, json_loads_limited
from catalog.domain.quotes import PriceQuote, PricingModel, usd_amount
from catalog.feeds.http import FeedError, fetch_bytes

NO_PRICE_SENTINELS = {Decimal(0), Decimal("700.0")}

# GCP host VM family -> the accelerator row it pairs with; the GPU count is the `-<n>g` suffix.
GCP_HOST_ACCELERATORS = {
    "a2-highgpu": "A100",
    "a2-megagpu": "A100",
    "a2-ultragpu": "A100-80GB",
    "a3-highgpu": "H100",
    "a3-edgegpu": "H100",
    "a3-megagpu": "H100-MEGA",
    "a3-ultragpu": "H200",
}
_GCP_HOST = re.compile(r"^(?P<family>[a-z0-9]+-[a-z]+)-(?P<count>\d+)g$")

PROVIDERS_WITH_TOTAL_MEMORY_PER_GPU_FIELD = {"vast"}


@dataclass(frozen=True)
class SkippedRow:
    provider: str
    line: int
    instance_type: str
    accelerator_name: str
    reason: str


@dataclass
class ParsedFeed:
    quotes: list[PriceQuote] = field(default_factory=list)
    skipped: list[SkippedRow] = field(default_factory=list)


def _decimal(raw: str | None) -> Decimal | None:
    raw = (raw or "").strip()
    if not raw:
        return None
    try:
        value = Decimal(raw)
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def _price(raw: str | None) -> Decimal | None:
    value = _decimal(raw)
    if value is None or value in NO_PRICE_SENTINELS or value < 0:
        return None
    return usd_amount(value)


def _gpu_info(raw: str | None) -> dict:
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
    size_mib = _decimal(str((gpus[0].get("MemoryInfo") or {}).get("SizeInMiB", "")))
    if not size_mib:
        return None
    if provider in PROVIDERS_WITH_TOTAL_MEMORY_PER_GPU_FIELD and gpu_count > 1:
        size_mib /= gpu_count
    if size_mib < 1024:  # a GB figure in a MiB field (RunPod)
        return size_mib
    return size_mib / 1024


@dataclass(frozen=True)
class _Row:
    line: int
    values: dict[str, str]

    def get(self, column: str) -> str:
        return (self.values.get(column) or "").strip()


def _quotes_for(
    provider: str,
    source: str,
    instance_type: str,
    accelerator: str,
    gpu_count: int,
    region: str,
    zone: str,
    prices: dict[PricingModel, Decimal | None],
    info: dict,
    vcpus: Decimal | None,
    ram_gib: Decimal | None,
) -> list[PriceQuote]:
    gpus = info.get("Gpus") or [{}]
    return [
        PriceQuote(
            provider=provider,
            instance_type=instance_type,
            region=region,
            zone=zone,
            accelerator_name=accelerator,
            gpu_count=gpu_count,
            pricing_model=model,
            usd_per_hour=price,
            source=source,
            gpu_memory_gib=_per_gpu_memory_gib(provider, info, gpu_count),
            gpu_description=str(gpus[0].get("Name") or ""),
            vcpus=vcpus,
            ram_gib=ram_gib,
        )
        for model, price in prices.items()
        if price is not None
    ]


def parse_vms_csv(lines: Iterable[str], *, provider: str, source: str) -> ParsedFeed:
    """Parse one cloud's `vms.csv`. Every row ends up either in quotes or in skipped."""
    rows = [_Row(number, values) for number, values in enumerate(csv.DictReader(lines), start=2)]
    result = ParsedFeed()
    gcp_hosts: list[_Row] = []
    gcp_accelerators: dict[tuple[str, int, str, str], _Row] = {}

    for row in rows:
        accelerator = row.get("AcceleratorName")
        count = _decimal(row.get("AcceleratorCount"))
        instance_type = row.get("InstanceType")
        if provider == "gcp" and not instance_type and accelerator and count:
            key = (accelerator, int(count), row.get("Region"), row.get("AvailabilityZone"))
            if key in gcp_accelerators:
                result.skipped.append(
                    SkippedRow(provider, row.line, "", accelerator, "duplicate GCP GPU price row")
                )
            else:
                gcp_accelerators[key] = row
            continue
        if (
            provider == "gcp"
            and instance_type
            and not accelerator
            and _GCP_HOST.match(instance_type)
        ):
            gcp_hosts.append(row)
            continue
        if not accelerator or not count:
            result.skipped.append(
                SkippedRow(provider, row.line, instance_type, "", "no accelerator (CPU-only)")
            )
            continue
        if count != int(count) or count < 1:
            result.skipped.append(
                SkippedRow(
                    provider,
                    row.line,
                    instance_type,
                    accelerator,
                    f"fractional GPU count {count} (a shared slice, not a whole GPU)",
                )
            )
            continue
        prices = {
            PricingModel.ON_DEMAND: _price(row.get("Price")),
            PricingModel.SPOT: _price(row.get("SpotPrice")),
        }
        if (
            prices[PricingModel.SPOT] is not None
            and prices[PricingModel.SPOT] == prices[PricingModel.ON_DEMAND]
        ):
            result.skipped.append(
                SkippedRow(
                    provider,
                    row.line,
                    instance_type,
                    accelerator,
                    "spot price equals on-demand (suspect feed value); spot not loaded",
                )
            )
            prices[PricingModel.SPOT] = None
        quotes = _quotes_for(
            provider,
            source,
            instance_type,
            accelerator,
            int(count),
            row.get("Region"),
            row.get("AvailabilityZone"),
            prices,
            _gpu_info(row.get("GpuInfo")),
            _decimal(row.get("vCPUs")),
            _decimal(row.get("MemoryGiB")),
        )
        if not quotes:
            result.skipped.append(
                SkippedRow(
                    provider, row.line, instance_type, accelerator, "no price (empty, 0 or 700.0)"
                )
            )
        result.quotes.extend(quotes)

    _join_gcp(provider, source, gcp_hosts, gcp_accelerators, result)
    return result


def _join_gcp(
    provider: str,
    source: str,
    hosts: list[_Row],
    accelerators: dict[tuple[str, int, str, str], _Row],
    result: ParsedFeed,
) -> None:
    used: set[tuple[str, int, str, str]] = set()
    for host in hosts:
        match = _GCP_HOST.match(host.get("InstanceType"))
        assert match is not None  # only matching hosts were collected
        accelerator = GCP_HOST_ACCELERATORS.get(match["family"])
        count = int(match["count"])
        key = (accelerator or "", count, host.get("Region"), host.get("AvailabilityZone"))
        gpu_row = accelerators.get(key)
        if accelerator is None or gpu_row is None:
            result.skipped.append(
                SkippedRow(
                    provider,
                    host.line,
                    host.get("InstanceType"),
                    accelerator or "",
                    "GCP host VM without a matching GPU price row in this extract",
                )
            )
            continue
        used.add(key)
        prices: dict[PricingModel, Decimal | None] = {}
        for model, column in ((PricingModel.ON_DEMAND, "Price"), (PricingModel.SPOT, "SpotPrice")):
            host_price, gpu_price = _price(host.get(column)), _price(gpu_row.get(column))
            prices[model] = (
                None if host_price is None or gpu_price is None else host_price + gpu_price
            )
        quotes = _quotes_for(
            provider,
            source,
            host.get("InstanceType"),
            accelerator,
            count,
            host.get("Region"),
            host.get("AvailabilityZone"),
            prices,
            _gpu_info(gpu_row.get("GpuInfo")),
            _decimal(host.get("vCPUs")),
            _decimal(host.get("MemoryGiB")),
        )
        if not quotes:
            result.skipped.append(
                SkippedRow(
                    provider,
                    host.line,
                    host.get("InstanceType"),
                    accelerator,
                    "no price (empty, 0 or 700.0) on the host or GPU row",
                )
            )
        result.quotes.extend(quotes)
    for key, row in accelerators.items():
        if key not in used:
            result.skipped.append(
                SkippedRow(
                    provider,
                    row.line,
                    "",
                    key[0],
                    f"GCP GPU price row ({key[1]}x {key[0]}) without a host VM row in this extract",
                )
            )


EXPECTED_COLUMNS = {"InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region"}


def fetch_skypilot(
    client: httpx.Client, base_url: str, files: dict[str, str], *, max_bytes: int
) -> ParsedFeed:
    """Fetch `<base_url>/<path>` for each provider and parse them all into one feed."""
    feed = ParsedFeed()
    for provider, path in files.items():
        body = fetch_bytes(client, f"{base_url.rstrip('/')}/{path}", max_bytes=max_bytes)
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as error:
            raise FeedError(f"SkyPilot {provider}: not UTF-8 text") from error
        header = set(next(csv.reader(io.StringIO(text)), []))
        missing = EXPECTED_COLUMNS - header
        if missing:
            raise FeedError(f"SkyPilot {provider}: missing columns {sorted(missing)}")
        parsed = parse_vms_csv(
            io.StringIO(text), provider=provider, source=f"skypilot {provider} ({base_url})"
        )
        feed.quotes.extend(parsed.quotes)
        feed.skipped.extend(parsed.skipped)
    return feed
