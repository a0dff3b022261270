"""Benchmark: a full gpuhunt refresh against a naive per-row save() loop, in one run.

Both write the same quotes (from the bundled test mirror, served over a local HTTP server)
into the same database: once into an empty catalogue (inserts), once with every price changed
by 1% (updates + history). Reports wall time and SQL query counts, and their ratios.

    .venv/bin/python bench/refresh.py            # SQLite in a temporary directory
    DATABASE_URL=postgres://... .venv/bin/python bench/refresh.py
"""

import json
import os
import platform
import sys
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DEBUG", "1")
os.environ.setdefault("VAR_DIR", tempfile.mkdtemp(prefix="bench-refresh-"))

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from catalog.domain.quotes import usd_amount  # noqa: E402
from catalog.domain.specs import parse_gpu_specs  # noqa: E402
from catalog.feeds.gpuhunt_catalog import fetch_gpuhunt  # noqa: E402
from catalog.feeds.http import new_client  # noqa: E402
from catalog.models import Gpu, Offer, PriceHistory, PriceRefresh, Provider  # noqa: E402
from catalog.services import (  # noqa: E402
    BUNDLED_DATA_DIR,
    FetchedFeed,
    gpus_upsert,
    price_refresh,
    providers_ensure,
)
from catalog.services.refresh import _matcher  # noqa: E402
from tests.catalog.feed_server import FeedServer  # noqa: E402

MIRROR = ROOT / "tests" / "fixtures" / "prices" / "gpuhunt_v3_mirror"


def reset() -> None:
    PriceHistory.objects.all().delete()
    Offer.objects.all().delete()
    PriceRefresh.objects.all().delete()


def ours(quotes) -> tuple[float, int]:
    with CaptureQueriesContext(connection) as queries:
        start = time.perf_counter()
        run = price_refresh(
            source="gpuhunt", fetch=lambda: FetchedFeed(list(quotes)), triggered_by="bench"
        )
        elapsed = time.perf_counter() - start
    assert run.status == "succeeded", run.reason
    return elapsed, len(queries)


def naive(quotes) -> tuple[float, int]:
    """What a first version would do: look up, save() and log each row on its own."""
    matcher = _matcher()
    gpus = {gpu.canonical_key: gpu for gpu in Gpu.objects.all()}
    with CaptureQueriesContext(connection) as queries:
        start = time.perf_counter()
        with transaction.atomic():
            for quote in quotes:
                match = matcher.match("gpuhunt", quote)
                if match.canonical_key is None:
                    continue
                provider, _ = Provider.objects.get_or_create(
                    key=quote.provider, defaults={"name": quote.provider}
                )
                offer = Offer.objects.filter(
                    provider=provider,
                    instance_type=quote.instance_type,
                    region=quote.region,
                    zone=quote.zone,
                    pricing_model=quote.pricing_model.value,
                ).first()
                if offer is None:
                    offer = Offer(
                        provider=provider,
                        instance_type=quote.instance_type,
                        region=quote.region,
                        zone=quote.zone,
                        pricing_model=quote.pricing_model.value,
                    )
                elif offer.usd_per_hour == quote.usd_per_hour:
                    continue
                offer.gpu = gpus[match.canonical_key]
                offer.gpu_count = quote.gpu_count
                offer.accelerator_name = quote.accelerator_name
                offer.usd_per_hour = quote.usd_per_hour
                offer.source = quote.source
                offer.price_observed_at = offer.last_seen_at = datetime.now(UTC)
                offer.save()
                PriceHistory.objects.create(
                    offer=offer,
                    usd_per_hour=quote.usd_per_hour,
                    observed_at=offer.price_observed_at,
                    source=quote.source,
                )
        elapsed = time.perf_counter() - start
    return elapsed, len(queries)


def main() -> None:
    call_command("migrate", verbosity=0)
    with (BUNDLED_DATA_DIR / "gpus.csv").open() as specs:
        gpus_upsert(specs=parse_gpu_specs(specs))
    providers_ensure(["aws", "lambda", "nebius", "runpod", "verda"])
    server = FeedServer()
    server.serve_directory(MIRROR)
    base = server.start()
    with new_client() as client:
        fetch_start = time.perf_counter()
        quotes = fetch_gpuhunt(client, base, max_bytes=10**7)
        fetch_s = time.perf_counter() - fetch_start
    server.stop()
    bumped = [replace(q, usd_per_hour=usd_amount(q.usd_per_hour * 101 / 100)) for q in quotes]

    results = {}
    for name, write in (("ours", ours), ("naive_save_loop", naive)):
        reset()
        insert_s, insert_q = write(quotes)
        update_s, update_q = write(bumped)
        results[name] = {
            "insert_seconds": round(insert_s, 3),
            "insert_queries": insert_q,
            "update_seconds": round(update_s, 3),
            "update_queries": update_q,
            "offers": Offer.objects.count(),
            "history_rows": PriceHistory.objects.count(),
        }
    assert results["ours"]["offers"] == results["naive_save_loop"]["offers"]
    ours_r, naive_r = results["ours"], results["naive_save_loop"]
    report = {
        "benchmark": "gpuhunt refresh vs naive per-row save()",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "database": connection.vendor,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "quotes": len(quotes),
        "fetch_and_parse_seconds": round(fetch_s, 3),
        "results": results,
        "ratios": {
            "insert_speedup": round(naive_r["insert_seconds"] / ours_r["insert_seconds"], 1),
            "update_speedup": round(naive_r["update_seconds"] / ours_r["update_seconds"], 1),
            "insert_query_ratio": round(naive_r["insert_queries"] / ours_r["insert_queries"], 1),
            "update_query_ratio": round(naive_r["update_queries"] / ours_r["update_queries"], 1),
        },
    }
    out = ROOT / "bench" / "results" / f"refresh_{connection.vendor}.json"
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
