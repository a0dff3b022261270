"""What the projection needs to know of a GPU and of an offer: plain values from the catalogue.

Figures come from the catalogue (catalog/data/gpus.csv): memory in GiB, bandwidth in decimal
GB/s, dense (not sparse) TFLOPS per precision, and the interconnect as its text and GB/s.
"""

import re
from dataclasses import dataclass

from advisor.domain.sizing.memory import GIB, USABLE_FRACTION

_PCIE_IN_TEXT = re.compile(r"pcie[^;]*?(\d+(?:\.\d+)?)\s*gb/s")
# A bridged pair talks over the bridge; a third GPU only over PCIe. When the catalogue text
# names no PCIe figure, assume Gen3 x16, the slowest still rented.
PCIE_FALLBACK_GB_S = 32.0
_BRIDGED_GPUS = 2


@dataclass(frozen=True)
class DeviceSpec:
    key: str
    name: str
    memory_gib: float
    bandwidth_gb_s: float
    fp32_tflops: float | None
    tf32_tflops: float | None
    bf16_tflops: float | None
    fp16_tflops: float | None
    fp8_tflops: float | None
    supports_tf32: bool
    supports_bf16: bool
    supports_fp8: bool
    interconnect: str
    interconnect_gb_s: float | None = None

    @property
    def usable_memory_bytes(self) -> float:
        """What CUDA can use, as the sizing engine assumes (driver and ECC take the rest)."""
        return USABLE_FRACTION * self.memory_gib * GIB

    def dense_tflops(self, precision: str) -> tuple[float | None, str | None]:
        """Dense peak for math observed at `precision`, and a note when this GPU would have to
        run it another way (no BF16 units: fp16; no TF32: plain fp32; no FP8: 16-bit)."""
        sixteen_bit = self.bf16_tflops if self.supports_bf16 else None
        sixteen_bit = sixteen_bit or self.fp16_tflops
        if precision == "fp8":
            if self.supports_fp8 and self.fp8_tflops:
                return self.fp8_tflops, None
            return sixteen_bit, f"{self.name} has no FP8 units: assumes 16-bit math"
        if precision == "bf16":
            if self.supports_bf16 and self.bf16_tflops:
                return self.bf16_tflops, None
            return self.fp16_tflops, f"{self.name} has no BF16 units: assumes the job runs fp16"
        if precision == "fp16":
            return self.fp16_tflops or self.bf16_tflops, None
        if precision == "tf32":
            if self.supports_tf32 and self.tf32_tflops:
                return self.tf32_tflops, None
            return self.fp32_tflops, f"{self.name} has no TF32 units: assumes fp32 math"
        return self.fp32_tflops, None

    def link_gb_s(self, gpu_count: int) -> float:
        """Bandwidth between this job's GPUs: the fabric or bridge when it joins them all,
        otherwise PCIe."""
        text = self.interconnect.lower()
        if "bridge" in text and gpu_count > _BRIDGED_GPUS:
            match = _PCIE_IN_TEXT.search(text)
            return float(match.group(1)) if match else PCIE_FALLBACK_GB_S
        return self.interconnect_gb_s or PCIE_FALLBACK_GB_S


@dataclass(frozen=True)
class Offer:
    provider: str
    instance_type: str
    gpu_count: int
    usd_per_hour: float

    @property
    def usd_per_gpu_hour(self) -> float:
        return self.usd_per_hour / self.gpu_count
