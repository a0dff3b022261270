"""The recorded Azure Retail Prices answer with its reservation page, served to the refresh."""

import json
from pathlib import Path

import httpx

from catalog.models import PriceRefresh
from catalog.services import price_refresh, price_source_fetcher

PRICES = Path(__file__).resolve().parents[1] / "fixtures" / "prices"
BASE = "https://prices.example/api"


def pages_with_reservations() -> list[dict]:
    """azure_page1, azure_page2, then azure_reservations: three pages linked by NextPageLink."""
    names = ("azure_page1.json", "azure_page2.json", "azure_reservations.json")
    pages = [json.loads((PRICES / name).read_text()) for name in names]
    pages[1]["NextPageLink"] = "{base}?page=3"
    return pages


def reservation(pages: list[dict], arm_sku_name: str, term: str) -> dict:
    """The reservation item of one SKU and term (in eastus), to change in a test."""
    return next(
        item
        for item in pages[2]["Items"]
        if item["armSkuName"] == arm_sku_name and item["reservationTerm"] == term
    )


def transport_for(pages: list[dict]) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        index = int(request.url.params.get("page", "1")) - 1
        return httpx.Response(
            200, json=json.loads(json.dumps(pages[index]).replace("{base}", BASE))
        )

    return httpx.MockTransport(handler)


def refresh_azure(
    pages: list[dict] | None = None, transport: httpx.BaseTransport | None = None
) -> PriceRefresh:
    fetch = price_source_fetcher(
        "azure", url=BASE, transport=transport or transport_for(pages or pages_with_reservations())
    )
    return price_refresh(source="azure", fetch=fetch, triggered_by="test")
