"""Turns the analyser's summary into the job's report: adds the catalogue GPU per rank and
the memory high-water mark against that GPU's capacity."""

from catalog.domain.device_names import match_device_name
from catalog.selectors import gpu_memory_gib_by_key


def trace_report(summary: dict) -> dict:
    memory_by_key = gpu_memory_gib_by_key()
    ranks = summary.get("ranks", [])
    found_names = {}
    for rank in ranks:
        properties = rank.get("device_properties") or {}
        memory = properties.get("totalGlobalMem")
        match = match_device_name(rank.get("gpu_name"), memory, memory_by_key)
        rank["catalog_gpu"] = match.canonical_key
        capacity = (
            int(memory)
            if memory
            else (int(memory_by_key[match.canonical_key] * 2**30) if match.canonical_key else None)
        )
        rank["capacity_bytes"] = capacity
        peak = rank.get("peak_reserved_bytes") or rank.get("peak_allocated_bytes")
        rank["peak_memory_pct_of_capacity"] = (
            round(100 * peak / capacity, 1) if peak and capacity else None
        )
        found_names[rank.get("gpu_name")] = (match.canonical_key, match.reason)
    name, (key, reason) = next(
        ((n, m) for n, m in found_names.items() if n), (None, (None, "no GPU named"))
    )
    return {
        **summary,
        "gpu": {"name": name, "catalog_gpu": key, "match": reason},
    }
