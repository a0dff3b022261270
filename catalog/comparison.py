"""GPUs side by side (/gpus/compare/?gpu=...): which GPUs a query names, and the rows of the
comparison table, each marking the best of its figures."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from catalog.models import Gpu
from catalog.snapshots import gpus_with_offer_stats
from catalog.templatetags.catalog_tags import number, usd

COMPARE_MIN_GPUS = 2
COMPARE_MAX_GPUS = 4


@dataclass(frozen=True)
class ComparedGpus:
    gpus: list[Gpu]
    errors: list[str]


def gpus_compared(keys: Sequence[str]) -> ComparedGpus:
    """The GPUs the query names, in its order, by key in any case; a duplicate counts once."""
    wanted = list(dict.fromkeys(key.strip().lower() for key in keys if key.strip()))
    by_key = {gpu.canonical_key.lower(): gpu for gpu in Gpu.objects.all()}
    errors = [f"No GPU has the key {key[:40]!r}." for key in wanted if key not in by_key]
    found = [by_key[key] for key in wanted if key in by_key]
    if not errors and not COMPARE_MIN_GPUS <= len(found) <= COMPARE_MAX_GPUS:
        errors.append(
            f"Choose {COMPARE_MIN_GPUS} to {COMPARE_MAX_GPUS} GPUs to compare "
            f"({len(found)} chosen): tick them in the GPU list."
        )
    return ComparedGpus(gpus_with_offer_stats(found) if not errors else [], errors)


@dataclass(frozen=True)
class ComparisonRow:
    label: str
    cells: list[str]
    best: list[bool]  # the cells that hold the row's best figure
    numeric: bool = True

    @property
    def marked_cells(self) -> list[tuple[str, bool]]:
        return list(zip(self.cells, self.best, strict=True))


def _row(
    label: str,
    gpus: Sequence[Gpu],
    value: Callable[[Gpu], float | Decimal | None],
    text: Callable[[float | Decimal | None], str] = number,
    higher_is_better: bool | None = True,
) -> ComparisonRow:
    values = [value(gpu) for gpu in gpus]
    known = [v for v in values if v is not None]
    best_value = None
    if higher_is_better is not None and len(known) > 1 and len(set(known)) > 1:
        best_value = max(known) if higher_is_better else min(known)
    return ComparisonRow(
        label,
        [text(v) if v is not None else "—" for v in values],
        [best_value is not None and v == best_value for v in values],
    )


def _price(cheapest) -> float | None:
    return None if cheapest is None else cheapest.usd_per_gpu_hour


def _precisions(gpu: Gpu) -> str:
    names = [
        name
        for name, supported in (
            ("TF32", gpu.supports_tf32),
            ("BF16", gpu.supports_bf16),
            ("FP8", gpu.supports_fp8),
        )
        if supported
    ]
    return ", ".join(names) or "—"


def comparison_rows(gpus: Sequence[Gpu]) -> list[ComparisonRow]:
    """Specs, cheapest prices (not stale) and offer counts; best marked where more (or, for
    prices and power, less) is better."""
    return [
        ComparisonRow("Vendor", [gpu.vendor for gpu in gpus], [False] * len(gpus), numeric=False),
        ComparisonRow(
            "Architecture", [gpu.architecture for gpu in gpus], [False] * len(gpus), numeric=False
        ),
        _row("Memory GiB", gpus, lambda gpu: gpu.memory_gib),
        _row("Bandwidth GB/s", gpus, lambda gpu: gpu.memory_bandwidth_gb_s),
        _row("BF16 TFLOPS (dense)", gpus, lambda gpu: gpu.bf16_tflops_dense),
        _row("FP16 TFLOPS (dense)", gpus, lambda gpu: gpu.fp16_tflops_dense),
        _row("FP8 TFLOPS (dense)", gpus, lambda gpu: gpu.fp8_tflops_dense),
        _row("INT8 TOPS (dense)", gpus, lambda gpu: gpu.int8_tops_dense),
        ComparisonRow(
            "Precisions", [_precisions(gpu) for gpu in gpus], [False] * len(gpus), numeric=False
        ),
        ComparisonRow(
            "Interconnect",
            [
                f"{gpu.interconnect} ({number(gpu.interconnect_gb_s)} GB/s)"
                if gpu.interconnect
                else "—"
                for gpu in gpus
            ],
            [False] * len(gpus),
            numeric=False,
        ),
        _row("TDP W", gpus, lambda gpu: gpu.tdp_watts, higher_is_better=False),
        _row("Offers", gpus, lambda gpu: gpu.offer_count, higher_is_better=None),
        _row(
            "On-demand from $/GPU-h",
            gpus,
            lambda gpu: _price(gpu.on_demand_from),
            text=usd,
            higher_is_better=False,
        ),
        _row(
            "Spot from $/GPU-h",
            gpus,
            lambda gpu: _price(gpu.spot_from),
            text=usd,
            higher_is_better=False,
        ),
    ]
