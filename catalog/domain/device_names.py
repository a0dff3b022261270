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
    (r"gh200", ("GH200",)),  # before h200: "NVIDIA GH200 480GB" contains "h200"
    (r"h100.*nvl", ("H100-NVL",)),
    (r"h100.*pcie", ("H100-PCIE",)),
    (r"h100", ("H100-SXM",)),
    (r"h200", ("H200-SXM",)),
    (r"\bh20\b", ("H20",)),
    (r"h800", ("H800-SXM",)),
    (r"gb300", ("GB300",)),
    (r"gb200", ("GB200",)),
    (r"b300", ("B300-SXM",)),
    (r"b200", ("B200-SXM",)),
    (r"a100.*40gb.*pcie|a100.*pcie.*40gb", ("A100-40GB-PCIE",)),
    (r"a100.*pcie", ("A100-80GB-PCIE", "A100-40GB-PCIE")),
    (r"a100", ("A100-40GB-SXM", "A100-80GB-SXM")),  # PG509-200 and SXM4 boards
    (r"a800", ("A800-80GB-PCIE",)),
    (r"a10g", ("A10G",)),
    (r"\ba10\b", ("A10",)),
    (r"\ba16\b", ("A16",)),
    (r"\ba2\b", ("A2",)),
    (r"\ba30\b", ("A30",)),
    (r"\ba40\b", ("A40",)),
    (r"l40s", ("L40S",)),
    (r"\bl40\b", ("L40",)),
    (r"\bl20\b", ("L20",)),
    (r"\bl4\b", ("L4",)),
    (r"\bt4g\b", ("T4G",)),
    (r"\bt4\b", ("T4",)),
    (r"v100", ("V100-16GB", "V100-32GB")),
    (r"p100.*sxm", ()),  # the catalogue has the PCIe card only
    (r"p100", ("P100",)),
    (r"\bp4000\b", ("P4000",)),
    (r"\bm4000\b", ("M4000",)),
    (r"\bp4\b", ("P4",)),
    (r"rtx pro 6000.*max q", ()),  # the Max-Q card is not in the catalogue
    (r"rtx pro 6000.*server", ("RTXPRO6000-Server",)),
    (r"rtx pro 6000.*workstation", ("RTXPRO6000-WS",)),
    (r"rtx 6000 ada", ("RTX6000Ada",)),
    (r"quadro rtx 6000", ("QuadroRTX6000",)),
    (r"quadro rtx 8000", ("QuadroRTX8000",)),
    (r"rtx a2000", ("RTXA2000", "RTXA2000-12GB")),
    (r"rtx a4000", ("RTXA4000",)),
    (r"rtx a4500", ("RTXA4500",)),
    (r"rtx a5000", ("RTXA5000",)),
    (r"rtx a5500", ("RTXA5500",)),
    (r"rtx a6000", ("RTXA6000",)),
    (r"rtx 3060 ti", ("RTX3060Ti",)),
    (r"rtx 3060", ("RTX3060",)),
    (r"rtx 3070 ti|rtx 3080 ti", ()),
    (r"rtx 3070", ("RTX3070",)),
    (r"rtx 3080", ("RTX3080",)),
    (r"rtx 3090 ti", ("RTX3090Ti",)),
    (r"rtx 3090", ("RTX3090",)),
    (r"rtx 4060 ti", ("RTX4060Ti",)),
    (r"rtx 4070 ti super", ("RTX4070TiSuper",)),
    (r"rtx 4070 ti", ("RTX4070Ti",)),
    (r"rtx 40[78]0 super", ()),
    (r"rtx 4070", ("RTX4070",)),
    (r"rtx 4080", ("RTX4080",)),
    (r"rtx 4090", ("RTX4090",)),
    (r"rtx 5080", ("RTX5080",)),
    (r"rtx 5090", ("RTX5090",)),
    (r"mi300x", ("MI300X",)),
    (r"mi300a", ("MI300A",)),
    (r"mi325x", ("MI325X",)),
    (r"mi355x", ("MI355X",)),
    (r"mi250x?", ("MI250X",)),
    (r"mi210", ("MI210",)),
    (r"mi100", ("MI100",)),
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
