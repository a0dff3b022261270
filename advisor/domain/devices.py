"""What the advisor knows of a GPU and of an offer: plain values handed over from the catalogue.

Figures are the catalogue's (catalog/data/gpus.csv): memory in GiB, bandwidth in decimal GB/s,
dense (not sparse) TFLOPS per precision, and the interconnect as its text and GB/s. Both the
sizing engine and right-sizing read the interconnect text through `Device.link`, one parse.
"""

import re
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property

from advisor.domain.compatibility import platform_of
from advisor.domain.provenance import fitted
from advisor.domain.sizing.memory_breakdown import GIB, USABLE_FRACTION
from catalog.domain.networks import InstanceNetwork, instance_network

# Fabrics that join a whole node's GPUs (tensor parallelism stays inside one).
_NODE_FABRICS = ("nvlink", "infinity fabric", "xe link", "ici", "roce")
NODE_FABRIC_GPUS = 8
# A bridge (NVLink bridge) pairs two cards; a third GPU talks to them only over PCIe.
BRIDGED_GPUS = 2
_PCIE_IN_TEXT = re.compile(r"pcie[^;]*?(\d+(?:\.\d+)?)\s*gb/s")
# When the catalogue text names no PCIe figure, assume Gen3 x16, the slowest still rented.
PCIE_FALLBACK_GB_S = 32.0
MIB = 2**20
MARKETPLACE = "marketplace"  # catalog.models.ProviderKind.MARKETPLACE
# What the driver keeps of the total nvidia-smi reports before CUDA sees any ("Reserved" in
# `nvidia-smi -q`): an H100 SXM reports 81,559 MiB ("H100: 81559MiB",
# https://github.com/modal-labs/modal-client/pull/2797) and shows vLLM 79.19 GiB = 81,091 MiB
# ("79.19 GiB physical" in llm-d-planner's vLLM v0.19.0 accuracy report,
# https://github.com/llm-d-incubation/llm-d-planner/blob/fbd68515a903397a1b785a2189dc7512b0d55680/accuracy/results/v0.19.0/accuracy_report.md
# ): 468 MiB. A fixed amount, not a share of the capacity: taken as a share (0.9943) it
# would leave an L4 reserving 131 MiB of its 23,034.
DRIVER_RESERVED_MIB = 468
fitted(
    "DRIVER_RESERVED_MIB",
    fitted_on=(),
    source="an H100's 81,559 MiB in nvidia-smi against vLLM's 79.19 GiB (not a row's figure)",
)


@dataclass(frozen=True)
class Link:
    """The catalogue's interconnect text, read once: how many GPUs its fast link joins, and the
    PCIe figure the text names for the GPUs beyond them (None when it names none)."""

    fast_link_gpus: int
    pcie_gb_s: float | None

    @classmethod
    def read(cls, text: str) -> "Link":
        lowered = text.lower()
        pcie = _PCIE_IN_TEXT.search(lowered)
        pcie_gb_s = float(pcie.group(1)) if pcie else None
        if "bridge" in lowered:
            return cls(BRIDGED_GPUS, pcie_gb_s)
        if any(fabric in lowered for fabric in _NODE_FABRICS):
            return cls(NODE_FABRIC_GPUS, pcie_gb_s)
        return cls(1, pcie_gb_s)


@dataclass(frozen=True, kw_only=True)
class MigProfile:
    """One MIG profile of a GPU as the catalogue lists it (catalog/data/mig_profiles.csv): its
    share of the SMs and of the memory (whose bandwidth comes in the same share), its memory in
    GiB, and how many of it one GPU holds."""

    name: str
    compute_fraction: float
    memory_fraction: float
    memory_gib: float
    max_count: int


@dataclass(frozen=True, kw_only=True)
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
    mig_profiles: tuple[MigProfile, ...] = ()
    # The catalogue's architecture ("Ampere", "Hopper"): training utilisation is per
    # architecture. Empty when unknown.
    architecture: str = ""
    # Vector (not tensor-core) FP64 TFLOPS, as the catalogue stores it; right-sizing scales
    # double-precision code by it. None when the catalogue has no figure.
    fp64_tflops: float | None = None
    # The catalogue's confidence in this part's figures (high, medium, low) and its notes on
    # them: an answer that leans on a low-confidence part says so.
    confidence: str = ""
    spec_notes: str = ""
    # The total nvidia-smi reports on a real card (MiB), as the catalogue sources it; None
    # where none is published, and the datasheet figure is used instead.
    visible_memory_mib: int | None = None
    # The board's power (TDP) in watts as the catalogue lists it; None where it has none.
    tdp_watts: float | None = None

    @property
    def low_confidence_warning(self) -> str | None:
        """What a sizing answer on this part warns, or None when its figures are sourced."""
        if self.confidence != "low":
            return None
        why = self.spec_notes or "the catalogue could not source all of its figures"
        return f"{self.name}'s specs are low confidence: {why}"

    @cached_property
    def platform(self) -> str:
        """Its accelerator family in the compatibility table (compatibility.platform_of)."""
        return platform_of(self.vendor, self.architecture)

    @cached_property
    def link(self) -> Link:
        return Link.read(self.interconnect)

    @property
    def has_node_fabric(self) -> bool:
        """Whether a whole node's GPUs share a fast fabric (NVLink, Infinity Fabric, ICI...):
        not PCIe-only cards, nor bridged pairs, whose bridge a rented instance rarely has."""
        return self.link.fast_link_gpus == NODE_FABRIC_GPUS

    def tensor_parallel_over_pcie(self, tensor_parallel: int) -> bool:
        """Whether a tensor-parallel group of this size all-reduces over PCIe (a bridge is
        not counted on: cloud listings of consumer cards rarely include one)."""
        return tensor_parallel > 1 and (
            not self.has_node_fabric or tensor_parallel > self.fast_link_gpus
        )

    @property
    def fast_link_gpus(self) -> int:
        """How many of these GPUs one fast fabric joins (tensor parallelism stays inside it).
        Bridged cards (NVLink bridge) pair up; PCIe-only cards have no fast fabric."""
        return self.link.fast_link_gpus

    def link_gb_s(self, gpu_count: int) -> float:
        """Bandwidth between a job's `gpu_count` GPUs: the fabric's catalogued GB/s, except that
        a bridge joins only a pair, so more bridged GPUs talk over PCIe."""
        if self.link.fast_link_gpus == BRIDGED_GPUS and gpu_count > BRIDGED_GPUS:
            return PCIE_FALLBACK_GB_S if self.link.pcie_gb_s is None else self.link.pcie_gb_s
        return self.interconnect_gb_s or PCIE_FALLBACK_GB_S

    @property
    def usable_memory_bytes(self) -> float:
        """What CUDA can use: the published nvidia-smi total less what the driver keeps where
        the catalogue has it (ECC on GDDR6 parts takes 1/16: an L4 shows 22.0 GiB), else a
        share of the datasheet capacity (an H100's 80 GiB shows as 79.2)."""
        visible = self.cuda_visible_bytes
        return USABLE_FRACTION * self.memory_gib * GIB if visible is None else visible

    @property
    def cuda_visible_bytes(self) -> float | None:
        """What CUDA reports as the device's total: nvidia-smi's total less what the driver
        keeps; None where the catalogue has no published nvidia-smi total (or one no larger than
        the driver's share, which the catalogue refuses)."""
        if self.visible_memory_mib is None or self.visible_memory_mib <= DRIVER_RESERVED_MIB:
            return None
        return (self.visible_memory_mib - DRIVER_RESERVED_MIB) * MIB

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
        if precision == "fp64":
            return self.fp64_tflops, None
        return self.fp32_tflops, None


@dataclass(frozen=True, kw_only=True)
class Offer:
    provider: str
    provider_name: str
    instance_type: str
    region: str
    gpu_count: int
    usd_per_hour: float
    pricing_model: str
    # The catalogue's provider kind: hyperscaler, gpu_cloud, marketplace ("" when unknown).
    provider_kind: str = ""
    # How fresh the price is (catalog/domain/freshness.py: live, snapshot, stale) and when it
    # was observed; None when the catalogue gave no date.
    freshness: str = "live"
    price_observed_at: datetime | None = None
    pricing_url: str | None = None

    @property
    def usd_per_gpu_hour(self) -> float:
        return self.usd_per_hour / self.gpu_count

    @property
    def is_marketplace(self) -> bool:
        return self.provider_kind == MARKETPLACE

    @property
    def network(self) -> InstanceNetwork:
        """The fabric a cluster of this instance joins over (catalog/data/instance_networks.csv),
        or the assumed Ethernet when the instance is not listed."""
        return instance_network(self.provider, self.instance_type)
