"""Datasheet specifications of a GPU, read from the bundled `gpus.csv`."""

import csv
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

GIB = 2**30


@dataclass(frozen=True)
class GpuSpec:
    """One accelerator's datasheet figures.

    Memory capacities on GPU datasheets are binary: an "80 GB" H100 reports 81,559 MiB in
    nvidia-smi. We therefore store them as GiB. Bandwidth is decimal GB/s (1e9 bytes/s) as
    vendors publish it. TFLOPS are dense (no structured-sparsity doubling).

    `visible_memory_mib` is the total the vendor's tool reports on a real card (nvidia-smi's
    "Memory-Usage" total, in MiB), with the page that shows it; None where none was found. It
    is below the datasheet figure on GDDR6 parts with ECC on (an L4 "24 GB" shows 23,034 MiB).
    """

    canonical_key: str
    name: str
    vendor: str
    architecture: str
    release_year: int | None
    memory_gib: Decimal
    memory_type: str
    memory_bandwidth_gb_s: Decimal
    fp64_tflops: Decimal | None
    fp32_tflops: Decimal | None
    tf32_tflops_dense: Decimal | None
    bf16_tflops_dense: Decimal | None
    fp16_tflops_dense: Decimal | None
    fp8_tflops_dense: Decimal | None
    int8_tops_dense: Decimal | None
    supports_tf32: bool
    supports_bf16: bool
    supports_fp8: bool
    tdp_watts: int | None
    form_factor: str
    interconnect: str
    interconnect_gb_s: Decimal | None
    mig_max_instances: int | None
    sparsity_halved: bool
    aliases: tuple[str, ...]
    confidence: str
    notes: str
    source_url: str
    visible_memory_mib: int | None = None
    visible_memory_source_url: str = ""

    @property
    def memory_bytes(self) -> int:
        return int(self.memory_gib * GIB)


class SpecError(ValueError):
    """A row of the specs file that cannot be used, with the row named."""


# A reported total below this share of the datasheet capacity is a typo or another card's
# figure: ECC on GDDR6 costs 1/16 (a T4's 16 GiB shows 15,360 MiB, 93.75%).
VISIBLE_MEMORY_MIN_SHARE = Decimal("0.9")


def visible_memory_problem(
    visible_mib: Decimal | int | None, source_url: str, memory_gib: Decimal
) -> str | None:
    """Why a reported total cannot stand (the CSV and the admin both ask), or None: it comes
    with its source, is whole MiB, and lies between 90% and 100% of the datasheet."""
    if visible_mib is None:
        return "visible_memory_source_url without visible_memory_mib" if source_url else None
    if not source_url.startswith("https://"):
        return "visible_memory_mib needs a visible_memory_source_url"
    datasheet_mib = Decimal(memory_gib) * 1024
    if visible_mib != int(visible_mib) or not (
        VISIBLE_MEMORY_MIN_SHARE * datasheet_mib <= visible_mib <= datasheet_mib
    ):
        return (
            f"visible_memory_mib={visible_mib} is not a whole MiB figure between "
            f"{VISIBLE_MEMORY_MIN_SHARE:.0%} and 100% of the datasheet's {datasheet_mib} MiB"
        )
    return None


def _visible_memory(row: dict[str, str], memory_gib: Decimal) -> tuple[int | None, str]:
    """The reported total and its source; both or neither, and never above the datasheet."""
    visible = _decimal(row, "visible_memory_mib")
    source = (row.get("visible_memory_source_url") or "").strip()
    problem = visible_memory_problem(visible, source, memory_gib)
    if problem:
        raise SpecError(f"{row.get('canonical_key', '?')}: {problem}")
    return (None, "") if visible is None else (int(visible), source)


def _decimal(row: dict[str, str], column: str, *, required: bool = False) -> Decimal | None:
    raw = (row.get(column) or "").strip()
    if not raw:
        if required:
            raise SpecError(f"{row.get('canonical_key', '?')}: column {column!r} is empty")
        return None
    try:
        value = Decimal(raw)
    except ArithmeticError as error:
        raise SpecError(
            f"{row.get('canonical_key', '?')}: {column}={raw!r} is not a number"
        ) from error
    if value < 0:
        raise SpecError(f"{row.get('canonical_key', '?')}: {column}={raw!r} is negative")
    return value


def _int(row: dict[str, str], column: str) -> int | None:
    value = _decimal(row, column)
    return None if value is None else int(value)


def _flag(row: dict[str, str], column: str) -> bool:
    return (row.get(column) or "").strip().upper() == "Y"


def parse_gpu_specs(lines: Iterable[str]) -> list[GpuSpec]:
    """Parse the specs CSV (header as in `catalog/data/gpus.csv`)."""
    specs = []
    for row in csv.DictReader(lines):
        memory_gib = _decimal(row, "memory_gb", required=True)
        bandwidth = _decimal(row, "memory_bandwidth_gbps", required=True)
        if not memory_gib or not bandwidth:
            raise SpecError(f"{row['canonical_key']}: memory and bandwidth must be positive")
        visible_memory_mib, visible_memory_source_url = _visible_memory(row, memory_gib)
        specs.append(
            GpuSpec(
                canonical_key=row["canonical_key"].strip(),
                name=row["name"].strip(),
                vendor=row["vendor"].strip(),
                architecture=row["architecture"].strip(),
                release_year=_int(row, "release_year"),
                memory_gib=memory_gib,
                memory_type=row["memory_type"].strip(),
                memory_bandwidth_gb_s=bandwidth,
                fp64_tflops=_decimal(row, "fp64_tflops"),
                fp32_tflops=_decimal(row, "fp32_tflops"),
                tf32_tflops_dense=_decimal(row, "tf32_tflops_dense"),
                bf16_tflops_dense=_decimal(row, "bf16_tflops_dense"),
                fp16_tflops_dense=_decimal(row, "fp16_tflops_dense"),
                fp8_tflops_dense=_decimal(row, "fp8_tflops_dense"),
                int8_tops_dense=_decimal(row, "int8_tops_dense"),
                supports_tf32=_flag(row, "supports_tf32"),
                supports_bf16=_flag(row, "supports_bf16"),
                supports_fp8=_flag(row, "supports_fp8"),
                tdp_watts=_int(row, "tdp_w"),
                form_factor=row["form_factor"].strip(),
                interconnect=row["interconnect"].strip(),
                interconnect_gb_s=_decimal(row, "interconnect_gbps"),
                mig_max_instances=_int(row, "mig_max_instances"),
                sparsity_halved=_flag(row, "sparsity_halved"),
                aliases=tuple(a.strip() for a in (row["aliases"] or "").split("|") if a.strip()),
                confidence=row["confidence"].strip(),
                notes=row["notes"].strip(),
                source_url=row["source_url"].strip(),
                visible_memory_mib=visible_memory_mib,
                visible_memory_source_url=visible_memory_source_url,
            )
        )
    keys = [spec.canonical_key for spec in specs]
    duplicates = sorted({key for key in keys if keys.count(key) > 1})
    if duplicates:
        raise SpecError(f"duplicate canonical keys: {', '.join(duplicates)}")
    return specs
