"""Writes to the catalogue: `offers` (GPUs, providers, offers, staff price edits) and `refresh`
(price refreshes from the feeds and the bundled snapshot). Callers import from here."""

from catalog.feeds import FetchedFeed
from catalog.services.offers import (
    BUNDLED_DATA_DIR,
    OfferUpsertCounts,
    UpsertCounts,
    gpus_upsert,
    offer_price_set,
    offers_upsert,
    providers_ensure,
    quarantined_price_decide,
)
from catalog.services.refresh import (
    CatalogLoadReport,
    RefreshAlreadyRunning,
    catalog_load_bundled,
    price_refresh,
    price_source_fetcher,
)

__all__ = [
    "BUNDLED_DATA_DIR",
    "CatalogLoadReport",
    "FetchedFeed",
    "OfferUpsertCounts",
    "RefreshAlreadyRunning",
    "UpsertCounts",
    "catalog_load_bundled",
    "gpus_upsert",
    "offer_price_set",
    "offers_upsert",
    "price_refresh",
    "price_source_fetcher",
    "providers_ensure",
    "quarantined_price_decide",
]
