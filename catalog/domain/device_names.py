"""Matching the GPU name a profiler or driver reports ("Tesla V100-SXM2-32GB", "NVIDIA H100
80GB HBM3", "NVIDIA A100-PG509-200") to a catalogue GPU.

A pattern names the family; the reported memory picks between siblings (A100 40 vs 80 GB,
V100 16 vs 32 GB). A name no pattern knows is reported as unmatched, never guessed.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

# (pattern on the lower-cased name, candidate catalogue keys). First match wins.
FAMILIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (r"h100.*nvl", ("H100-NVL",)),
    (r"h100.*pcie", ("H100-PCIE",)),
    (r"h100", ("H100-SXM",)),
    (r"h200", ("H200-SXM",)),
    (r"gb200", ("GB200",)),
    (r"b200", ("B200-SXM",)),
    (r"a100.*pcie", ("A100-80GB-PCIE",)),
    (r"a100", ("A100-40GB-SXM", "A100-80GB-SXM")),  # PG509-200 and SXM4 boards
    (r"a10g", ("A10G",)),
    (r"\ba10\b", ("A10",)),
    (r"l40s", ("L40S",)),
    (r"\bl40\b", ("L40",)),
    (r"\bl4\b", ("L4",)),
    (r"\bt4\b", ("T4",)),
    (r"v100", ("V100-16GB", "V100-32GB")),
    (r"rtx 4090|geforce rtx 4090", ("RTX4090",)),
    (r"rtx 3090", ("RTX3090",)),
    (r"rtx 5090", ("RTX5090",)),
    (r"rtx 6000 ada", ("RTX6000Ada",)),
    (r"rtx a6000", ("RTXA6000",)),
    (r"mi300x", ("MI300X",)),
    (r"mi325x", ("MI325X",)),
    (r"mi250x?", ("MI250X",)),
)


@dataclass(frozen=True)
class DeviceMatch:
    canonical_key: str | None
    reason: str


def match_device_name(
    name: str | None, memory_bytes: int | None, memory_gib_by_key: Mapping[str, Decimal]
) -> DeviceMatch:
    if not name:
        return DeviceMatch(None, "the trace does not name its GPU")
    lowered = name.lower().replace("-", " ").replace("_", " ")
    for pattern, keys in FAMILIES:
        if not re.search(pattern, lowered):
            continue
        known = [key for key in keys if key in memory_gib_by_key]
        if not known:
            break
        if len(known) == 1 or not memory_bytes:
            note = "" if len(known) == 1 else f" (memory not reported: assumed {known[0]})"
            return DeviceMatch(known[0], f"{name!r} is a {known[0]}{note}")
        reported_gib = Decimal(memory_bytes) / 2**30
        best = min(known, key=lambda key: abs(memory_gib_by_key[key] - reported_gib))
        return DeviceMatch(best, f"{name!r} with {reported_gib:.1f} GiB is a {best}")
    return DeviceMatch(None, f"{name!r} is not a GPU in the catalogue")
