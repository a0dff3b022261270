"""Per-process copies of what is read from the catalogue, kept while the catalogue is unchanged.

A gunicorn worker, a Celery worker and a management command are separate processes: each keeps
its own copy, and each request asks the database, with one one-row query, whether the
catalogue changed since (the version token that triggers change on every write; see
CatalogueVersion). A price a refresh, the admin or any other process writes is therefore seen
by the very next request in every process, and no request reads thousands of offer rows just
to find them unchanged.
"""

from collections.abc import Callable, Hashable, Iterable
from typing import Generic, TypeVar

from catalog.models import Gpu
from catalog.selectors import (
    CheapestPrice,
    GpuOfferStats,
    catalogue_version_get,
    gpu_offer_stats_list,
)

T = TypeVar("T")


class CatalogueSnapshot(Generic[T]):
    """`load(key)` as of the catalogue version it was last read at, read again when the version
    differs. The version is read before the rows: a write committed in between makes the next
    request read the rows again, never keeps older rows under a newer version."""

    def __init__(self, load: Callable[[Hashable], T]) -> None:
        self._load = load
        self._entries: dict[Hashable, tuple[int, T]] = {}

    def get(self, key: Hashable = None) -> T:
        version = catalogue_version_get()
        cached = self._entries.get(key)
        if version is not None and cached is not None and cached[0] == version:
            return cached[1]
        value = self._load(key)
        if version is None:
            self._entries.pop(key, None)
        else:
            self._entries[key] = (version, value)
        return value


_gpu_offer_stats = CatalogueSnapshot(lambda _key: gpu_offer_stats_list())


def gpus_with_offer_stats(gpus: Iterable[Gpu]) -> list[Gpu]:
    """The GPUs, in their order, each with `offer_count`, `on_demand_from` and `spot_from`
    (the cheapest price that is not stale, with its freshness; None without one), and those
    prices as `min_on_demand_usd_per_gpu_hour` and `min_spot_usd_per_gpu_hour` to sort by;
    from this process's copy of the offer counts and cheapest prices."""
    stats = _gpu_offer_stats.get()
    listed = list(gpus)
    for gpu in listed:
        gpu_stats = stats.get(gpu.pk, GpuOfferStats())
        gpu.offer_count = gpu_stats.offer_count
        gpu.on_demand_from, gpu.spot_from = gpu_stats.on_demand, gpu_stats.spot
        gpu.min_on_demand_usd_per_gpu_hour = _price(gpu_stats.on_demand)
        gpu.min_spot_usd_per_gpu_hour = _price(gpu_stats.spot)
    return listed


def _price(cheapest: CheapestPrice | None) -> float | None:
    return None if cheapest is None else cheapest.usd_per_gpu_hour
