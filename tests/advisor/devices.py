"""Devices and offers for the advisor's tests: the project's catalogue (catalog/data/gpus.csv)
read straight from its CSV, made-up devices with only the figures a test gives, and hourly
on-demand prices from the bundled SkyPilot snapshot (catalog/data/skypilot/)."""

import csv
from collections import defaultdict
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

from advisor.domain.devices import Device, MigProfile, Offer

GPUS_CSV = Path(__file__).resolve().parents[2] / "catalog" / "data" / "gpus.csv"
MIG_CSV = GPUS_CSV.with_name("mig_profiles.csv")


def _number(text: str) -> float | None:
    return float(text) if text.strip() else None


def _whole(text: str) -> int | None:
    return int(text) if text.strip() else None


def _mig_profiles() -> dict[str, tuple[MigProfile, ...]]:
    """Each GPU's MIG profiles from mig_profiles.csv, smallest memory (then compute) first."""
    with MIG_CSV.open(newline="") as file:
        rows = sorted(
            csv.DictReader(file),
            key=lambda r: (Decimal(r["memory_gib"]), int(r["compute_slices"]), r["profile"]),
        )
    profiles: dict[str, list[MigProfile]] = defaultdict(list)
    for row in rows:
        profiles[row["gpu_key"]].append(
            MigProfile(
                name=row["profile"],
                compute_fraction=int(row["compute_slices"]) / int(row["compute_slices_total"]),
                memory_fraction=float(round(Fraction(row["memory_fraction"]), 4)),
                memory_gib=float(row["memory_gib"]),
                max_count=int(row["max_count"]),
            )
        )
    return {key: tuple(values) for key, values in profiles.items()}


def catalogue_devices() -> dict[str, Device]:
    """Every catalogue GPU by its key, each figure from the CSV column of its meaning."""
    with GPUS_CSV.open(newline="") as file:
        rows = list(csv.DictReader(file))
    mig_profiles = _mig_profiles()
    return {
        row["canonical_key"]: Device(
            key=row["canonical_key"],
            name=row["name"],
            vendor=row["vendor"],
            memory_gib=float(row["memory_gb"]),  # the catalogue's memory is GiB
            bandwidth_gb_s=float(row["memory_bandwidth_gbps"]),
            fp32_tflops=_number(row["fp32_tflops"]),
            tf32_tflops=_number(row["tf32_tflops_dense"]),
            bf16_tflops=_number(row["bf16_tflops_dense"]),
            fp16_tflops=_number(row["fp16_tflops_dense"]),
            fp8_tflops=_number(row["fp8_tflops_dense"]),
            int8_tops=_number(row["int8_tops_dense"]),
            supports_tf32=row["supports_tf32"] == "Y",
            supports_bf16=row["supports_bf16"] == "Y",
            supports_fp8=row["supports_fp8"] == "Y",
            interconnect=row["interconnect"],
            interconnect_gb_s=_number(row["interconnect_gbps"]),
            architecture=row["architecture"],
            fp64_tflops=_number(row["fp64_tflops"]),
            confidence=row["confidence"],
            spec_notes=row["notes"],
            mig_profiles=mig_profiles.get(row["canonical_key"], ()),
            visible_memory_mib=_whole(row["visible_memory_mib"]),
            tdp_watts=_number(row["tdp_w"]),
        )
        for row in rows
    }


def made_up_device(key: str = "x", **figures) -> Device:
    """A device named `key` (AMD for MI* keys) with only the given figures: 80 GiB at 1,000 GB/s
    over NVLink unless told otherwise, no throughput figure and no TF32/BF16/FP8 support; an
    architecture every stack runs on (Hopper, CDNA 3) unless told otherwise."""
    amd = key.startswith("MI")
    values = {
        "name": key,
        "vendor": "AMD" if amd else "NVIDIA",
        "architecture": "CDNA 3" if amd else "Hopper",
        "memory_gib": 80,
        "bandwidth_gb_s": 1000,
        "fp32_tflops": None,
        "tf32_tflops": None,
        "bf16_tflops": None,
        "fp16_tflops": None,
        "fp8_tflops": None,
        "int8_tops": None,
        "supports_tf32": False,
        "supports_bf16": False,
        "supports_fp8": False,
        "interconnect": "NVLink",
        "interconnect_gb_s": None,
        **figures,
    }
    return Device(key=key, **values)


def offer(provider: str, instance_type: str, gpu_count: int, usd_per_hour: float) -> Offer:
    return Offer(
        provider=provider,
        provider_name=provider,
        instance_type=instance_type,
        region="",
        gpu_count=gpu_count,
        usd_per_hour=usd_per_hour,
        pricing_model="on_demand",
    )


GPUS = catalogue_devices()
# Lambda gpu_1x_h100_sxm5 $4.29, gpu_1x_a100_sxm4 $1.99, gpu_1x_a10 $1.29; GCP L4 in asia-east1
# $0.64847 (GPU only).
OFFERS = {
    "H100-SXM": [offer("lambda", "gpu_1x_h100_sxm5", 1, 4.29)],
    "A100-40GB-SXM": [offer("lambda", "gpu_1x_a100_sxm4", 1, 1.99)],
    "A10": [offer("lambda", "gpu_1x_a10", 1, 1.29)],
    "L4": [offer("gcp", "g2-standard-4 (GPU only)", 1, 0.64847)],
}
