"""The advisor's window on the catalogue: GPUs and offers as plain dataclasses."""

from collections import defaultdict

from django.db.models import Count, Max

from advisor.domain.sizing.devices import Device, Offer
from advisor.domain.sizing.recommend import SizingResult, recommend
from advisor.domain.sizing.workload import Workload
from catalog.models import Gpu
from catalog.models import Offer as OfferRow

_GPU_COLUMNS = [
    "canonical_key",
    "name",
    "vendor",
    "memory_gib",
    "memory_bandwidth_gb_s",
    "fp32_tflops",
    "tf32_tflops_dense",
    "bf16_tflops_dense",
    "fp16_tflops_dense",
    "fp8_tflops_dense",
    "int8_tops_dense",
    "supports_tf32",
    "supports_bf16",
    "supports_fp8",
    "interconnect",
    "interconnect_gb_s",
]
# Per-process copies of the catalogue as the engine sees it, rebuilt when the catalogue
# changes (any offer or GPU written since): reading ~1,000 offers on every request would cost
# more than the sizing itself.
_snapshots: dict[str, tuple[tuple, list[Device], dict[str, list[Offer]]]] = {}


def _float(value) -> float | None:
    return None if value is None else float(value)


def sizing_devices() -> list[Device]:
    return [
        Device(
            key=row[0],
            name=row[1],
            vendor=row[2],
            memory_gib=float(row[3]),
            bandwidth_gb_s=float(row[4]),
            fp32_tflops=_float(row[5]),
            tf32_tflops=_float(row[6]),
            bf16_tflops=_float(row[7]),
            fp16_tflops=_float(row[8]),
            fp8_tflops=_float(row[9]),
            int8_tops=_float(row[10]),
            supports_tf32=row[11],
            supports_bf16=row[12],
            supports_fp8=row[13],
            interconnect=row[14],
            interconnect_gb_s=_float(row[15]),
        )
        for row in Gpu.objects.order_by("name").values_list(*_GPU_COLUMNS)
    ]


def sizing_offers(*, pricing_model: str) -> dict[str, list[Offer]]:
    offers: dict[str, list[Offer]] = defaultdict(list)
    rows = OfferRow.objects.filter(pricing_model=pricing_model).values_list(
        "gpu__canonical_key",
        "provider__key",
        "provider__name",
        "instance_type",
        "region",
        "gpu_count",
        "usd_per_hour",
        "pricing_model",
    )
    for gpu, provider, provider_name, instance, region, count, price, model in rows:
        offers[gpu].append(
            Offer(
                provider=provider,
                provider_name=provider_name,
                instance_type=instance,
                region=region,
                gpu_count=count,
                usd_per_hour=float(price),
                pricing_model=model,
            )
        )
    return offers


def _catalogue_version() -> tuple:
    offers = OfferRow.objects.aggregate(changed=Max("updated_at"), count=Count("id"))
    gpus = Gpu.objects.aggregate(changed=Max("updated_at"), count=Count("id"))
    return offers["changed"], offers["count"], gpus["changed"], gpus["count"]


def sizing_catalogue(*, pricing_model: str) -> tuple[list[Device], dict[str, list[Offer]]]:
    version = _catalogue_version()
    cached = _snapshots.get(pricing_model)
    if cached and cached[0] == version:
        return cached[1], cached[2]
    devices, offers = sizing_devices(), sizing_offers(pricing_model=pricing_model)
    _snapshots[pricing_model] = (version, devices, offers)
    return devices, offers


def sizing_advise(*, workload: Workload) -> SizingResult:
    devices, offers = sizing_catalogue(pricing_model=workload.pricing_model)
    return recommend(workload, devices, offers)
