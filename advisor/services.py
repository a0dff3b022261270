"""The advisor's window on the catalogue: GPUs and offers as plain dataclasses."""

from collections import defaultdict

from advisor.domain.sizing.devices import Device, Offer
from advisor.domain.sizing.recommend import SizingResult, recommend
from advisor.domain.sizing.workload import Workload
from catalog.models import Gpu
from catalog.selectors import offer_list


def _float(value) -> float | None:
    return None if value is None else float(value)


def sizing_devices() -> list[Device]:
    return [
        Device(
            key=gpu.canonical_key,
            name=gpu.name,
            vendor=gpu.vendor,
            memory_gib=float(gpu.memory_gib),
            bandwidth_gb_s=float(gpu.memory_bandwidth_gb_s),
            fp32_tflops=_float(gpu.fp32_tflops),
            tf32_tflops=_float(gpu.tf32_tflops_dense),
            bf16_tflops=_float(gpu.bf16_tflops_dense),
            fp16_tflops=_float(gpu.fp16_tflops_dense),
            fp8_tflops=_float(gpu.fp8_tflops_dense),
            int8_tops=_float(gpu.int8_tops_dense),
            supports_tf32=gpu.supports_tf32,
            supports_bf16=gpu.supports_bf16,
            supports_fp8=gpu.supports_fp8,
            interconnect=gpu.interconnect,
            interconnect_gb_s=_float(gpu.interconnect_gb_s),
        )
        for gpu in Gpu.objects.order_by("name")
    ]


def sizing_offers(*, pricing_model: str) -> dict[str, list[Offer]]:
    offers: dict[str, list[Offer]] = defaultdict(list)
    rows = offer_list().filter(pricing_model=pricing_model)
    for offer in rows:
        offers[offer.gpu.canonical_key].append(
            Offer(
                provider=offer.provider.key,
                provider_name=offer.provider.name,
                instance_type=offer.instance_type,
                region=offer.region,
                gpu_count=offer.gpu_count,
                usd_per_hour=float(offer.usd_per_hour),
                pricing_model=offer.pricing_model,
            )
        )
    return offers


def sizing_advise(*, workload: Workload) -> SizingResult:
    return recommend(
        workload, sizing_devices(), sizing_offers(pricing_model=workload.pricing_model)
    )
