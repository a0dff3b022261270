"""Accelerator families: what the compatibility table's rows are, and which one a catalogue GPU
is (from its vendor and architecture text): NVIDIA by architecture (with its compute
capability), AMD by CDNA/RDNA generation, Intel Gaudi and Data Center GPU Max, Google TPU
generations, AWS NeuronCore generations."""

NVIDIA_ARCHITECTURES = (
    "maxwell",
    "pascal",
    "volta",
    "turing",
    "ampere",
    "ada",
    "hopper",
    "blackwell",
    "blackwell-consumer",
    "blackwell-ultra",
)
# Compute capability of each NVIDIA family (the lowest member where a family spans several).
COMPUTE_CAPABILITY = {
    "maxwell": 5.2,
    "pascal": 6.0,
    "volta": 7.0,
    "turing": 7.5,
    "ampere": 8.0,
    "ada": 8.9,
    "hopper": 9.0,
    "blackwell": 10.0,
    "blackwell-ultra": 10.3,
    "blackwell-consumer": 12.0,
}
_AMD = {"cdna": "amd-cdna1", "cdna 2": "amd-cdna2", "cdna 3": "amd-cdna3", "cdna 4": "amd-cdna4"}
PLATFORM_NAMES = {
    **{
        f"nvidia-{arch}": f"NVIDIA {arch.replace('-', ' ').title()}"
        for arch in NVIDIA_ARCHITECTURES
    },
    "amd-cdna1": "AMD CDNA (MI100)",
    "amd-cdna2": "AMD CDNA 2 (MI200)",
    "amd-cdna3": "AMD CDNA 3 (MI300)",
    "amd-cdna4": "AMD CDNA 4 (MI355X)",
    "amd-rdna1": "AMD RDNA (Radeon Pro V520)",
    "intel-gaudi1": "Intel Gaudi",
    "intel-gaudi2": "Intel Gaudi 2",
    "intel-gaudi3": "Intel Gaudi 3",
    "intel-xpu": "Intel Data Center GPU Max",
    "tpu-v2": "TPU v2",
    "tpu-v3": "TPU v3",
    "tpu-v4": "TPU v4",
    "tpu-v5e": "TPU v5e",
    "tpu-v5p": "TPU v5p",
    "tpu-v6e": "TPU v6e",
    "aws-inf1": "AWS Inferentia (NeuronCore-v1)",
    "aws-neuron2": "AWS Inferentia2 / Trainium (NeuronCore-v2)",
    "aws-neuron3": "AWS Trainium2 (NeuronCore-v3)",
    "unknown": "an accelerator the table does not know",
}


def platform_of(vendor: str, architecture: str) -> str:
    """The accelerator family of a catalogue GPU, from its vendor and architecture text."""
    arch = architecture.lower()
    vendor = vendor.lower()
    if vendor == "nvidia":
        if arch.startswith("blackwell ultra"):
            return "nvidia-blackwell-ultra"
        if arch.startswith("blackwell (gb20"):
            return "nvidia-blackwell-consumer"
        family = arch.split(" ")[0]
        if family == "ada":
            return "nvidia-ada"
        return f"nvidia-{family}" if family in NVIDIA_ARCHITECTURES else "unknown"
    if vendor == "amd":
        if arch.startswith("rdna"):
            return "amd-rdna1"
        return _AMD.get(arch.split(" (")[0], "unknown")
    if vendor == "intel":
        for generation in ("3", "2"):
            if arch.startswith(f"gaudi {generation}"):
                return f"intel-gaudi{generation}"
        if arch.startswith("gaudi"):
            return "intel-gaudi1"
        return "intel-xpu" if "xe-hpc" in arch else "unknown"
    if vendor == "google":
        version = arch.replace("tpu ", "").split(" ")[0]
        return f"tpu-{version}" if f"tpu-{version}" in PLATFORM_NAMES else "unknown"
    if vendor == "aws":
        for core, platform in (("v1", "aws-inf1"), ("v2", "aws-neuron2"), ("v3", "aws-neuron3")):
            if f"neuroncore-{core}" in arch:
                return platform
    return "unknown"


def vendor_of(platform: str) -> str:
    """The platform's vendor family: nvidia, amd, intel, google, aws."""
    return {"tpu": "google"}.get(platform.split("-")[0], platform.split("-")[0])


def nvidia_from(minimum: float, maximum: float = 99.0) -> frozenset[str]:
    """The NVIDIA families whose compute capability is in [minimum, maximum]."""
    return frozenset(
        f"nvidia-{arch}"
        for arch, capability in COMPUTE_CAPABILITY.items()
        if minimum <= capability <= maximum
    )


AMD_INSTINCT = frozenset({"amd-cdna2", "amd-cdna3", "amd-cdna4"})
GAUDI_2_3 = frozenset({"intel-gaudi2", "intel-gaudi3"})
