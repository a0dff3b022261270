"""What the engine knows of a GPU and an offer: plain values handed over from the catalogue."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Device:
    key: str
    name: str
    vendor: str
    memory_gib: float
    bandwidth_gb_s: float
    fp32_tflops: float | None
    tf32_tflops: float | None
    bf16_tflops: float | None
    fp16_tflops: float | None
    fp8_tflops: float | None
    int8_tops: float | None
    supports_tf32: bool
    supports_bf16: bool
    supports_fp8: bool
    interconnect: str
    interconnect_gb_s: float | None

    @property
    def fast_link_gpus(self) -> int:
        """How many of these GPUs one fast fabric joins (tensor parallelism stays inside it).
        Bridged cards (NVLink bridge) pair up; PCIe-only cards have no fast fabric."""
        link = self.interconnect.lower()
        if "bridge" in link:
            return 2
        if any(
            fabric in link for fabric in ("nvlink", "infinity fabric", "xe link", "ici", "roce")
        ):
            return 8
        return 1


@dataclass(frozen=True)
class Offer:
    provider: str
    provider_name: str
    instance_type: str
    region: str
    gpu_count: int
    usd_per_hour: float
    pricing_model: str
