"""MIG (Multi-Instance GPU) profiles of a GPU, read from the bundled `mig_profiles.csv`.

A profile such as `2g.20gb` is a slice of compute (here 2 of the GPU's 7 SM slices) and of
memory (here 2 of its 8 memory slices, which carry their share of the memory bandwidth too),
as NVIDIA's MIG User Guide tables publish them, with how many of it one GPU can hold.
"""

import csv
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

# Where each memory figure comes from: what nvidia-smi reports for the instance, or the GB in
# the profile's name (decimal GB, converted to GiB) when no nvidia-smi listing was found.
MEMORY_BASES = ("nvidia-smi", "profile name")
CONFIDENCES = ("high", "medium", "low")


class MigProfileError(ValueError):
    """A row of the MIG profile table that cannot be read."""


@dataclass(frozen=True)
class MigProfileSpec:
    gpu_key: str
    profile: str
    compute_slices: int
    compute_slices_total: int
    memory_fraction: Decimal
    memory_gib: Decimal
    memory_basis: str
    max_count: int
    confidence: str
    source_url: str
    memory_source_url: str
    notes: str

    @property
    def compute_fraction(self) -> Decimal:
        return Decimal(self.compute_slices) / Decimal(self.compute_slices_total)


def _positive_int(row: dict[str, str], column: str, where: str) -> int:
    raw = (row.get(column) or "").strip()
    if not raw.isdigit() or int(raw) < 1:
        raise MigProfileError(f"{where}: {column}={raw!r} is not a whole number from 1")
    return int(raw)


def _fraction(raw: str, where: str) -> Decimal:
    """`n/d` as NVIDIA's tables print it (`Full` is written 8/8 in the file)."""
    try:
        value = Fraction(raw.strip())
    except (ValueError, ZeroDivisionError) as error:
        raise MigProfileError(f"{where}: memory_fraction={raw!r} is not n/d") from error
    if not 0 < value <= 1:
        raise MigProfileError(f"{where}: memory_fraction={raw!r} is not in (0, 1]")
    return (Decimal(value.numerator) / Decimal(value.denominator)).quantize(Decimal("0.0001"))


def _row(row: dict[str, str]) -> MigProfileSpec:
    where = f"{row.get('gpu_key', '?')} {row.get('profile', '?')}"
    compute_slices = _positive_int(row, "compute_slices", where)
    compute_total = _positive_int(row, "compute_slices_total", where)
    if compute_slices > compute_total:
        raise MigProfileError(f"{where}: {compute_slices} of {compute_total} compute slices")
    try:
        memory_gib = Decimal(row["memory_gib"].strip())
    except ArithmeticError as error:
        raise MigProfileError(f"{where}: memory_gib={row['memory_gib']!r}") from error
    if memory_gib <= 0:
        raise MigProfileError(f"{where}: memory_gib must be positive")
    basis, confidence = row["memory_basis"].strip(), row["confidence"].strip()
    if basis not in MEMORY_BASES:
        raise MigProfileError(f"{where}: memory_basis={basis!r} is not one of {MEMORY_BASES}")
    if confidence not in CONFIDENCES:
        raise MigProfileError(f"{where}: confidence={confidence!r}")
    source_url = row["source_url"].strip()
    if not source_url.startswith("https://"):
        raise MigProfileError(f"{where}: every row needs its source_url")
    return MigProfileSpec(
        gpu_key=row["gpu_key"].strip(),
        profile=row["profile"].strip(),
        compute_slices=compute_slices,
        compute_slices_total=compute_total,
        memory_fraction=_fraction(row["memory_fraction"], where),
        memory_gib=memory_gib,
        memory_basis=basis,
        max_count=_positive_int(row, "max_count", where),
        confidence=confidence,
        source_url=source_url,
        memory_source_url=row["memory_source_url"].strip(),
        notes=row["notes"].strip(),
    )


def parse_mig_profiles(lines: Iterable[str]) -> list[MigProfileSpec]:
    """Parse the MIG profile CSV (header as in `catalog/data/mig_profiles.csv`)."""
    specs = [_row(row) for row in csv.DictReader(lines)]
    seen: set[tuple[str, str]] = set()
    for spec in specs:
        key = (spec.gpu_key, spec.profile)
        if key in seen:
            raise MigProfileError(f"{spec.gpu_key} {spec.profile}: listed twice")
        seen.add(key)
    return specs
