"""gpuhunt's pre-built per-provider catalogues -> PriceQuote.

We download each provider's `version` and `catalog.zip` ourselves (timeouts and size caps),
over HTTP or from a local `file://` mirror through the same path, lay them out as a local
mirror, and let `gpuhunt.Catalog(auto_reload=False)` load and query that mirror, asking only
for the offline providers. The module-level `gpuhunt.query()` is never
used: it adds live providers that call their APIs.
"""

import os
import tempfile
import threading
from decimal import Decimal
from pathlib import Path

import gpuhunt
import httpx

from catalog.domain.quotes import PriceQuote, PricingModel, usd_amount
from catalog.feeds.http import FeedError, fetch_bytes

PROVIDERS = ("aws", "azure", "gcp", "lambdalabs", "nebius", "oci", "runpod", "verda", "cloudrift")
# gpuhunt's provider names where ours differ.
PROVIDER_KEYS = {"lambdalabs": "lambda"}
_ENV_LOCK = threading.Lock()  # gpuhunt reads its catalogue URL from the environment


def _mirror(client: httpx.Client, base_url: str, directory: Path, max_bytes: int) -> dict[str, str]:
    versions = {}
    for provider in PROVIDERS:
        version = fetch_bytes(client, f"{base_url}/{provider}/version", max_bytes=1024)
        version_text = version.decode("utf-8", "replace").strip()
        if not version_text or "/" in version_text or ".." in version_text:
            raise FeedError(f"gpuhunt {provider}: unusable version {version_text[:40]!r}")
        archive = fetch_bytes(
            client, f"{base_url}/{provider}/{version_text}/catalog.zip", max_bytes=max_bytes
        )
        target = directory / provider / version_text
        target.mkdir(parents=True)
        (target / "catalog.zip").write_bytes(archive)
        (directory / provider / "version").write_text(version_text)
        versions[provider] = version_text
    return versions


def fetch_gpuhunt(client: httpx.Client, base_url: str, *, max_bytes: int) -> list[PriceQuote]:
    base_url = base_url.rstrip("/")
    with tempfile.TemporaryDirectory(prefix="gpuhunt-") as tmp:
        versions = _mirror(client, base_url, Path(tmp), max_bytes)
        catalog = gpuhunt.Catalog(balance_resources=False, auto_reload=False)
        with _ENV_LOCK:
            previous = os.environ.get("GPUHUNT_CATALOG_URL")
            os.environ["GPUHUNT_CATALOG_URL"] = Path(tmp).as_uri()
            try:
                catalog.load()
                items = catalog.query(provider=list(PROVIDERS))
            except Exception as error:
                raise FeedError(f"gpuhunt could not read the catalogue: {error}") from error
            finally:
                if previous is None:
                    os.environ.pop("GPUHUNT_CATALOG_URL", None)
                else:
                    os.environ["GPUHUNT_CATALOG_URL"] = previous
    quotes = []
    for item in items:
        if not item.gpu_count or not item.gpu_name:
            continue  # CPU-only instances
        provider = PROVIDER_KEYS.get(item.provider, item.provider)
        zone = str((item.provider_data or {}).get("zone") or "")
        quotes.append(
            PriceQuote(
                provider=provider,
                instance_type=item.instance_name,
                region=item.location,
                zone=zone,
                accelerator_name=item.gpu_name,
                gpu_count=int(item.gpu_count),
                pricing_model=PricingModel.SPOT if item.spot else PricingModel.ON_DEMAND,
                usd_per_hour=usd_amount(Decimal(str(item.price))),
                source=f"gpuhunt {item.provider}@{versions.get(item.provider, '?')}",
                gpu_memory_gib=Decimal(str(item.gpu_memory)) if item.gpu_memory else None,
                vcpus=Decimal(item.cpu) if item.cpu else None,
                ram_gib=Decimal(str(item.memory)) if item.memory else None,
            )
        )
    return quotes
