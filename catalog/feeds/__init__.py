"""Price sources. Each module turns one source's format into PriceQuote dataclasses.

`FETCHERS` is the registry the services read: one entry per source key, each a function from a
`FeedRequest` (where to read and within which limits) to a `FetchedFeed`. Plain Python: the
caller fills the request from settings, so nothing here imports Django.
"""

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import httpx

from catalog.domain.quotes import PriceQuote
from catalog.feeds.azure import fetch_azure, parse_sku_table
from catalog.feeds.csv_import import CsvFormatError, parse_price_csv
from catalog.feeds.gpuhunt_catalog import fetch_gpuhunt
from catalog.feeds.http import FeedError, new_client
from catalog.feeds.skypilot import SkippedRow, fetch_skypilot


@dataclass
class FetchedFeed:
    """What a source handed over: quotes, and rows it could not turn into quotes."""

    quotes: list[PriceQuote]
    skipped: list[SkippedRow] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)  # rows that failed to parse, with reasons
    observed_at: datetime | None = None
    rows_read: int | None = None  # the source's own rows, where they are not one per quote


@dataclass(frozen=True)
class FeedRequest:
    """Where one read goes and its limits. `transport` lets tests serve recorded responses to
    httpx; `lines` is the uploaded file of a CSV import."""

    url: str
    data_dir: Path
    timeout_s: float
    max_bytes: int
    transport: httpx.BaseTransport | None = None
    lines: Iterable[str] | None = None

    def client(self) -> httpx.Client:
        return new_client(self.timeout_s, transport=self.transport)


def _read_gpuhunt(request: FeedRequest) -> FetchedFeed:
    with request.client() as http:
        return FetchedFeed(fetch_gpuhunt(http, request.url, max_bytes=request.max_bytes))


def _read_azure(request: FeedRequest) -> FetchedFeed:
    with (request.data_dir / "azure_gpu_skus.csv").open(newline="") as table:
        skus = parse_sku_table(table)
    with request.client() as http:
        prices = fetch_azure(http, request.url, skus, max_bytes=request.max_bytes)
    return FetchedFeed(prices.quotes, invalid=prices.invalid)


def _read_skypilot(request: FeedRequest) -> FetchedFeed:
    manifest = json.loads((request.data_dir / "skypilot" / "manifest.json").read_text())
    files = {e["provider"]: e["upstream_path"] for e in manifest["files"] if not e.get("excluded")}
    with request.client() as http:
        parsed = fetch_skypilot(http, request.url, files, max_bytes=request.max_bytes)
    return FetchedFeed(parsed.quotes, skipped=parsed.skipped, rows_read=parsed.rows_read)


def _read_csv(request: FeedRequest) -> FetchedFeed:
    if request.lines is None:
        raise ValueError("a CSV import needs the file's lines")
    try:
        parsed = parse_price_csv(request.lines, source="staff CSV import")
    except CsvFormatError as error:
        raise FeedError(str(error)) from error
    return FetchedFeed(parsed.quotes, invalid=parsed.errors)


@dataclass(frozen=True)
class Fetcher:
    read: Callable[[FeedRequest], FetchedFeed]
    url_setting: str | None  # the settings name of the source's default URL


FETCHERS: dict[str, Fetcher] = {
    "gpuhunt": Fetcher(_read_gpuhunt, "GPUHUNT_CATALOG_URL"),
    "azure": Fetcher(_read_azure, "AZURE_PRICES_URL"),
    "skypilot": Fetcher(_read_skypilot, "SKYPILOT_CATALOG_URL"),
    "csv": Fetcher(_read_csv, None),
}
