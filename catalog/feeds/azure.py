"""Azure Retail Prices API (public, no key) -> PriceQuote, for GPU VM SKUs.

Pages through `NextPageLink`; keeps Linux consumption prices (on-demand, and spot where the SKU
name says Spot); skips Windows, Low Priority and DevTest meters. The SKU -> GPU table is
catalog/data/azure_gpu_skus.csv; the quotes name catalogue GPUs directly.
"""

import csv
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

import httpx

from catalog.domain.json_depth import json_loads_limited
from catalog.domain.quotes import PriceQuote, PricingModel, usd_amount
from catalog.feeds.http import FeedError, fetch_bytes

DEFAULT_URL = "https://prices.azure.com/api/retail/prices"
MAX_PAGES = 200


@dataclass(frozen=True)
class AzureSku:
    gpu: str
    gpu_count: int


def parse_sku_table(lines: Iterable[str]) -> dict[str, AzureSku]:
    rows = csv.DictReader(line for line in lines if not line.startswith("#"))
    return {row["arm_sku_name"]: AzureSku(row["gpu"], int(row["gpu_count"])) for row in rows}


def _filter(skus: Iterable[str]) -> str:
    names = " or ".join(f"armSkuName eq '{sku}'" for sku in sorted(skus))
    return f"serviceName eq 'Virtual Machines' and priceType eq 'Consumption' and ({names})"


def parse_page(payload: dict, skus: dict[str, AzureSku], source: str) -> list[PriceQuote]:
    """One page of the API's JSON: the GPU VM rows we keep, as quotes."""
    items = payload.get("Items")
    if not isinstance(items, list):
        raise FeedError("Azure answer has no Items list")
    quotes = []
    for item in items:
        if not isinstance(item, dict):
            continue
        sku = skus.get(str(item.get("armSkuName", "")))
        name = f"{item.get('skuName', '')} {item.get('meterName', '')}"
        if sku is None or "Windows" in str(item.get("productName", "")):
            continue
        if "Low Priority" in name or item.get("type", "Consumption") != "Consumption":
            continue
        try:
            price = Decimal(str(item.get("retailPrice", item.get("unitPrice"))))
        except InvalidOperation:
            price = Decimal(-1)  # validation rejects it with the other bad rows
        quotes.append(
            PriceQuote(
                provider="azure",
                instance_type=str(item["armSkuName"]),
                region=str(item.get("armRegionName", "")),
                zone="",
                accelerator_name=sku.gpu,
                gpu_count=sku.gpu_count,
                pricing_model=PricingModel.SPOT if "Spot" in name else PricingModel.ON_DEMAND,
                usd_per_hour=usd_amount(price) if price.is_finite() else price,
                source=source,
                currency=str(item.get("currencyCode", "")),
                unit=str(item.get("unitOfMeasure", "1 Hour")),
            )
        )
    return quotes


def fetch_azure(
    client: httpx.Client, url: str, skus: dict[str, AzureSku], *, max_bytes: int
) -> list[PriceQuote]:
    params: dict | None = {"currencyCode": "USD", "$filter": _filter(skus)}
    quotes: list[PriceQuote] = []
    next_url: str | None = url
    for _ in range(MAX_PAGES):
        if not next_url:
            return quotes
        body = fetch_bytes(client, next_url, max_bytes=max_bytes, params=params)
        try:
            payload = json_loads_limited(body)
        except ValueError as error:  # not JSON (truncated?), not UTF-8, or nested too deeply
            raise FeedError(f"Azure answer is not JSON (truncated?): {error}") from error
        if not isinstance(payload, dict):
            raise FeedError("Azure answer is not a JSON object")
        quotes.extend(parse_page(payload, skus, "Azure Retail Prices API"))
        next_url, params = payload.get("NextPageLink"), None  # the link carries the query
    raise FeedError(f"Azure kept paging past {MAX_PAGES} pages")
