"""SkyPilot catalogue `vms.csv` files (one per cloud) -> PriceQuote.

Columns differ in order from cloud to cloud, so rows are read by header. Every row read ends up
in a quote or in `skipped` with a reason. Quirks handled here, each documented in the SkyPilot
catalogue and our `catalog/data/README.md`:
- an empty price, `0.0` and `700.0` (sentinels) mean "no price";
- rows repeated verbatim (GCP's file has 154) are loaded once and counted;
- AWS's FPGA (f1, f2) and video-transcoder (vt1) instances are not ML accelerators: skipped;
- a fractional `AcceleratorCount` (AWS g6f/gr6f: 1/8 to 1/2 of an L4) is a slice of one GPU,
  which the catalogue's offers (whole GPUs) cannot hold: skipped with the share;
- OCI lists every availability domain of a region at the region's one price: one offer per
  region;
- GCP prices host VMs, GPUs and TPUs in separate rows (`catalog/feeds/skypilot_gcp.py`);
- `GpuInfo` is a Python-literal dict in most files and JSON in others;
- RunPod writes GB into the `SizeInMiB` field; Vast writes the total over all GPUs there.
"""

import csv
import io
from collections.abc import Iterable

import httpx

from catalog.feeds.http import FeedError, fetch_bytes
from catalog.feeds.skypilot_gcp import parse_gcp_rows
from catalog.feeds.skypilot_rows import (
    CPU_ONLY,
    Instance,
    ParsedFeed,
    Row,
    SkippedRow,
    gpu_info,
    quotes_for,
    read_rows,
    row_prices,
    skip,
)

__all__ = ["ParsedFeed", "SkippedRow", "fetch_skypilot", "parse_vms_csv"]

# AWS instance families whose accelerator is not an ML GPU; the family is the type's prefix.
# https://aws.amazon.com/ec2/instance-types/f1/ (Xilinx VU9P FPGA),
# https://aws.amazon.com/ec2/instance-types/f2/ (AMD Virtex UltraScale+ VU47P FPGA),
# https://aws.amazon.com/ec2/instance-types/vt1/ (Xilinx U30 media accelerator).
NOT_ML_ACCELERATOR_FAMILIES = {
    "f1": "FPGA instance (AWS f1/f2), not an ML accelerator",
    "f2": "FPGA instance (AWS f1/f2), not an ML accelerator",
    "vt1": "video-transcoder instance (AWS vt1), not an ML accelerator",
}
# Providers whose zones within a region carry one price: one offer per region.
PROVIDERS_PRICED_PER_REGION = {"oci"}

FRACTIONAL_GPU = (
    "fractional GPU (a share of one GPU, AWS g6f/gr6f): offers are priced per whole GPU, so "
    "the slice is not loaded"
)
SAME_PRICE_OTHER_ZONE = (
    "another availability domain at the region's same price (one offer per region)"
)


def _row_instance(provider: str, row: Row, result: ParsedFeed) -> Instance | None:
    """The instance a plain (non-GCP) row describes, or None with the row skipped."""
    accelerator = row.get("AcceleratorName")
    count = row.decimal("AcceleratorCount")
    instance_type = row.get("InstanceType")
    family = instance_type.split(".")[0]
    if provider == "aws" and family in NOT_ML_ACCELERATOR_FAMILIES:
        skip(result, provider, row, NOT_ML_ACCELERATOR_FAMILIES[family], accelerator)
        return None
    if not accelerator or not count:
        skip(result, provider, row, CPU_ONLY)
        return None
    if count != int(count) or count < 1:
        skip(result, provider, row, FRACTIONAL_GPU, f"{count.normalize()} of one {accelerator}")
        return None
    return Instance(
        instance_type=instance_type,
        accelerator=accelerator,
        gpu_count=int(count),
        region=row.get("Region"),
        zone=row.get("AvailabilityZone"),
        info=gpu_info(row.get("GpuInfo")),
        vcpus=row.decimal("vCPUs"),
        ram_gib=row.decimal("MemoryGiB"),
    )


def _one_row_per_region(provider: str, rows: list[Row], result: ParsedFeed) -> list[Row]:
    """The first zone of each (instance, region) stands for the others when all carry the same
    prices (the offer's zone is then empty); zones priced differently stay separate offers."""
    groups: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        groups.setdefault((row.get("InstanceType"), row.get("Region")), []).append(row)
    kept = []
    for group in groups.values():
        if len({(row.get("Price"), row.get("SpotPrice")) for row in group}) > 1:
            kept.extend(group)
            continue
        first = group[0]
        kept.append(Row(first.line, {**first.values, "AvailabilityZone": ""}))
        for row in group[1:]:
            skip(result, provider, row, SAME_PRICE_OTHER_ZONE, f"as line {first.line}")
    return sorted(kept, key=lambda row: row.line)


def parse_vms_csv(lines: Iterable[str], *, provider: str, source: str) -> ParsedFeed:
    """Parse one cloud's `vms.csv`. Every row ends up either in quotes or in skipped."""
    result = ParsedFeed()
    rows = read_rows(lines, result, provider)
    if provider == "gcp":
        parse_gcp_rows(rows, provider=provider, source=source, result=result)
        return result
    if provider in PROVIDERS_PRICED_PER_REGION:
        rows = _one_row_per_region(provider, rows, result)
    for row in rows:
        instance = _row_instance(provider, row, result)
        if instance is None:
            continue
        prices = row_prices(provider, row, result)
        if prices is not None:
            result.quotes.extend(quotes_for(provider, source, instance, prices))
    return result


EXPECTED_COLUMNS = {"InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region"}


def fetch_skypilot(
    client: httpx.Client, base_url: str, files: dict[str, str], *, max_bytes: int
) -> ParsedFeed:
    """Fetch `<base_url>/<path>` for each provider (http(s), or a `file://` mirror) and parse
    them all into one feed."""
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
        feed.extend(
            parse_vms_csv(
                io.StringIO(text), provider=provider, source=f"skypilot {provider} ({base_url})"
            )
        )
    return feed
