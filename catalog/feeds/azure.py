"""Azure Retail Prices API (public, no key) -> PriceQuote, for GPU VM SKUs.

Pages through `NextPageLink`; keeps Linux consumption prices (on-demand, and spot where the SKU
name says Spot) and reservations; skips Windows, Low Priority and DevTest meters. The SKU -> GPU
table is catalog/data/azure_gpu_skus.csv; the quotes name catalogue GPUs directly.

A reservation item ("type": "Reservation", "reservationTerm": "1 Year" or "3 Years") prices the
whole term per VM although its unitOfMeasure says "1 Hour": Microsoft's page
https://learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices lists
Standard_M8ms in eastus at 7740.0 for 1 Year and 11297.0 for 3 Years beside its hourly
consumption price. Reservations cover compute only, so they have no Windows, Spot or Low
Priority variants. Each becomes a reserved_1y / reserved_3y quote at its hourly equivalent (the
total over 8,760 hours a year of the term); its source note keeps the term's total.
"""

import csv
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

import httpx

from catalog.domain.json_depth import json_loads_limited
from catalog.domain.quotes import (
    RESERVED_TERM_YEARS,
    PriceQuote,
    PricingModel,
    reserved_hourly_equivalent,
    usd_amount,
)
from catalog.feeds.http import FeedError, fetch_bytes

DEFAULT_URL = "https://prices.azure.com/api/retail/prices"
MAX_PAGES = 200
SOURCE = "Azure Retail Prices API"
RESERVATION_TERMS = {"1 Year": PricingModel.RESERVED_1Y, "3 Years": PricingModel.RESERVED_3Y}


@dataclass(frozen=True)
class AzureSku:
    gpu: str
    gpu_count: int


def parse_sku_table(lines: Iterable[str]) -> dict[str, AzureSku]:
    rows = csv.DictReader(line for line in lines if not line.startswith("#"))
    return {row["arm_sku_name"]: AzureSku(row["gpu"], int(row["gpu_count"])) for row in rows}


def _filter(skus: Iterable[str]) -> str:
    names = " or ".join(f"armSkuName eq '{sku}'" for sku in sorted(skus))
    return (
        "serviceName eq 'Virtual Machines' and "
        f"(priceType eq 'Consumption' or priceType eq 'Reservation') and ({names})"
    )


@dataclass
class AzurePrices:
    """The quotes read, and the rows refused while reading them (with a reason a person can act
    on); those count as invalid rows of the batch."""

    quotes: list[PriceQuote] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)


def _price(item: dict) -> Decimal:
    try:
        return Decimal(str(item.get("retailPrice", item.get("unitPrice"))))
    except InvalidOperation:
        return Decimal(-1)  # validation rejects it with the other bad rows


def _reservation(item: dict, price: Decimal) -> tuple[PricingModel, Decimal, str] | str:
    """A reservation's pricing model, hourly equivalent and source note; or why it is refused."""
    term = item.get("reservationTerm")
    model = RESERVATION_TERMS.get(str(term))
    if model is None:
        return (
            f"{item.get('armSkuName')} in {item.get('armRegionName')}: reservation term "
            f"{term!r} is neither '1 Year' nor '3 Years' (a new term needs RESERVATION_TERMS "
            "in catalog/feeds/azure.py)"
        )
    if not price.is_finite():
        return model, price, SOURCE
    note = f"{SOURCE}: reservation, ${price:,.2f} per VM for {term}, paid for the whole term"
    return model, reserved_hourly_equivalent(price, RESERVED_TERM_YEARS[model]), note


def parse_page(payload: dict, skus: dict[str, AzureSku]) -> AzurePrices:
    """One page of the API's JSON: the GPU VM rows we keep, as quotes."""
    items = payload.get("Items")
    if not isinstance(items, list):
        raise FeedError("Azure answer has no Items list")
    page = AzurePrices()
    for item in items:
        if not isinstance(item, dict):
            continue
        sku = skus.get(str(item.get("armSkuName", "")))
        name = f"{item.get('skuName', '')} {item.get('meterName', '')}"
        if sku is None or "Windows" in str(item.get("productName", "")):
            continue
        price_type = item.get("type", "Consumption")
        if "Low Priority" in name or price_type not in ("Consumption", "Reservation"):
            continue
        price = _price(item)
        if price_type == "Reservation":
            reservation = _reservation(item, price)
            if isinstance(reservation, str):
                page.invalid.append(reservation)
                continue
            model, usd_per_hour, source = reservation
        else:
            model = PricingModel.SPOT if "Spot" in name else PricingModel.ON_DEMAND
            usd_per_hour = usd_amount(price) if price.is_finite() else price
            source = SOURCE
        page.quotes.append(
            PriceQuote(
                provider="azure",
                instance_type=str(item["armSkuName"]),
                region=str(item.get("armRegionName", "")),
                zone="",
                accelerator_name=sku.gpu,
                gpu_count=sku.gpu_count,
                pricing_model=model,
                usd_per_hour=usd_per_hour,
                source=source,
                currency=str(item.get("currencyCode", "")),
                unit=str(item.get("unitOfMeasure", "1 Hour")),
            )
        )
    return page


def fetch_azure(
    client: httpx.Client, url: str, skus: dict[str, AzureSku], *, max_bytes: int
) -> AzurePrices:
    params: dict | None = {"currencyCode": "USD", "$filter": _filter(skus)}
    prices = AzurePrices()
    next_url: str | None = url
    for _ in range(MAX_PAGES):
        if not next_url:
            return prices
        body = fetch_bytes(client, next_url, max_bytes=max_bytes, params=params)
        try:
            payload = json_loads_limited(body)
        except ValueError as error:  # not JSON (truncated?), not UTF-8, or nested too deeply
            raise FeedError(f"Azure answer is not JSON (truncated?): {error}") from error
        if not isinstance(payload, dict):
            raise FeedError("Azure answer is not a JSON object")
        page = parse_page(payload, skus)
        prices.quotes.extend(page.quotes)
        prices.invalid.extend(page.invalid)
        next_url, params = payload.get("NextPageLink"), None  # the link carries the query
    raise FeedError(f"Azure kept paging past {MAX_PAGES} pages")
