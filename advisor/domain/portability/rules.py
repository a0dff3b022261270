"""The rule catalogue of shared/portability_rules.md: ids, default severities, Why and the
portable alternative, as written there. Rule ids are the contract with reports and SARIF;
the code scanner (jobs/domain/codescan) applies the rules.

A rule whose severity depends on context ("rewrite if compile-time, re-tune if runtime") has
the first form as its default; findings that land on the other one say why in `context`.

Below the catalogue: what a rule's finding decides for a move to each target (DECISIONS), used
by the code scan's verdicts, and the facts a team can state about its stack (STACK_FACTS),
used by the questionnaire's, which decide through the same DECISIONS where a rule stands for
them.
"""

from dataclasses import dataclass
from enum import StrEnum

from advisor.domain.portability.questions import Target

REWRITE_RISK = "rewrite-risk"
RE_TUNE = "re-tune"
INFO = "info"
SEVERITIES = (REWRITE_RISK, RE_TUNE, INFO)


@dataclass(frozen=True)
class Rule:
    id: str
    name: str  # PascalCase, for SARIF reportingDescriptor.name
    severity: str  # the default
    summary: str  # what is matched, one line
    why: str
    alternative: str

    @property
    def category(self) -> str:
        return self.id.rstrip("0123456789")


def _rules(*rules: Rule) -> dict[str, Rule]:
    return {rule.id: rule for rule in rules}


RULES = _rules(
    Rule(
        "TC001",
        "HandTiledWmmaFragment",
        REWRITE_RISK,
        "wmma::fragment with fixed M, N, K shapes",
        "Hand-written warp MMA with fixed 16×16×16 / 16×16×8 fragments is NVIDIA tensor-core "
        "ISA; AMD needs rocWMMA shapes per wave size.",
        "cuBLAS/hipBLASLt GEMM, or rocWMMA behind a traits header",
    ),
    Rule(
        "TC002",
        "TensorCorePtx",
        REWRITE_RISK,
        "inline PTX with mma.sync, wgmma, ldmatrix, stmatrix or cp.async",
        "Tensor-core or async-copy PTX cannot be hipified (DPCT1053).",
        "Library GEMM (CUTLASS/CK/hipBLASLt) or compiler intrinsics behind a backend switch",
    ),
    Rule(
        "TC003",
        "CuteArchAtoms",
        REWRITE_RISK,
        "CuTe MMA/copy atoms of one SM generation (SM80_16x8x16_..., SM75_U32x4_LDSM_N)",
        "Kernel traits are built from one NVIDIA generation's MMA/copy atoms.",
        "Keep atoms in a per-arch traits file; have a CK/Triton path",
    ),
    Rule(
        "TC004",
        "CutlassTileConfig",
        RE_TUNE,
        "CUTLASS arch tags, OpClassTensorOp, GemmShape<...> template parameters",
        "Tiles sit in library template parameters (a swappable config block), but the library "
        "is NVIDIA-only.",
        "Same config in CK/hipBLASLt; select per device",
    ),
    Rule(
        "TC005",
        "LiteralTileShapes",
        RE_TUNE,
        "literal tile or warp counts in kernel-traits instantiations and tile macros",
        "Tiles chosen for A100 smem/SM counts.",
        "Autotuned or queried tiles (Triton autotune, CK instance lists)",
    ),
    Rule(
        "TC006",
        "AmpereAsyncPipeline",
        REWRITE_RISK,
        "<cuda/pipeline>, <cuda/barrier>, cuda::memcpy_async, __pipeline_memcpy_async",
        '"Overlap transfer and compute" is hard-coded to Ampere cp.async.',
        "Portable double-buffering or a library pipeline",
    ),
    Rule(
        "PREC001",
        "GlobalTf32Switch",
        RE_TUNE,
        "assignment to torch.backends.{cuda.matmul,cudnn}.allow_tf32 and reduced-precision flags",
        "TF32 on or off as a global literal, not a precision policy (on ROCm TF32 is "
        "additionally gated by HIPBLASLT_ALLOW_TF32).",
        "torch.set_float32_matmul_precision() from config",
    ),
    Rule(
        "PREC002",
        "MatmulPrecisionPolicy",
        INFO,
        "torch.set_float32_matmul_precision(level)",
        "Portable intent API; record the chosen level.",
        "—",
    ),
    Rule(
        "PREC003",
        "CompileTimeTf32",
        REWRITE_RISK,
        "CUBLAS_COMPUTE_32F_FAST_TF32, wmma::precision::tf32, tfloat32_t, cvt.rna.tf32, "
        "float + OpClassTensorOp + Sm80 + GemmShape<16,8,8>",
        "TF32 baked in as a compile-time type or constant.",
        "Compute type from a runtime precision policy",
    ),
    Rule(
        "PREC004",
        "VendorGatedPrecision",
        RE_TUNE,
        "bf16/TF32 enablement gated on torch.version.cuda, CUDA/NCCL versions or capability",
        "Vendor identity used as a proxy for capability, so ROCm/XPU silently lose bf16.",
        "torch.cuda.is_bf16_supported() / capability query via accelerator",
    ),
    Rule(
        "PREC005",
        "Tf32CalibratedTolerance",
        REWRITE_RISK,
        "atol/rtol or loss-scale constants next to tf32/A100 identifiers or comments",
        "Numerics calibrated to TF32 rounding.",
        "Derive tolerances from dtype eps / policy",
    ),
    Rule(
        "COMM001",
        "HardwiredNcclBackend",
        RE_TUNE,
        'init_process_group/new_group/init_device_mesh with backend="nccl"',
        'Backend hardwired (fine on ROCm, where "nccl" = RCCL; breaks XPU/HPU/CPU).',
        "dist.get_default_backend_for_device(acc), accelerator communication_backend_name()",
    ),
    Rule(
        "COMM002",
        "DirectNcclApi",
        RE_TUNE,
        "#include <nccl.h> and nccl*() calls",
        "Collectives coded straight against NCCL.",
        "Comm abstraction (torch.distributed, deepspeed.comm, oneCCL/RCCL adapters)",
    ),
    Rule(
        "COMM003",
        "NvlinkTopologyAssumed",
        REWRITE_RISK,
        "multimem/NVLS, nvmlDeviceGetNvLink*, nvidia-smi topo -m, is_full_nvlink, cudaIpc "
        "handles, peer-access gating",
        "Algorithm assumes NVLink/NVSwitch (multicast, SHARP, P2P).",
        "Topology query through the comm library; keep a ring/tree fallback",
    ),
    Rule(
        "COMM004",
        "NvidiaFabricEnvTuning",
        RE_TUNE,
        "NCCL_*, TORCH_NCCL_*, NVSHMEM_*, CUDA_DEVICE_MAX_CONNECTIONS set in code or export",
        "Topology/transport tuning written for NVIDIA fabrics.",
        "Per-platform env profile outside code",
    ),
    Rule(
        "COMM005",
        "PythonNcclDependency",
        RE_TUNE,
        "torch.cuda.nccl, is_nccl_available(), nccl.version(), ProcessGroupNCCL, pynccl",
        "Python-level NCCL dependency.",
        "dist.is_backend_available(get_default_backend_for_device())",
    ),
    Rule(
        "COMM006",
        "EightGpuIslandAssumed",
        RE_TUNE,
        "GPUS_PER_NODE=8 with tensor-parallel size 8 and no topology query",
        "Assumes an 8-GPU NVSwitch island.",
        "Derive TP from the local world size / topology",
    ),
    Rule(
        "MEM001",
        "HardcodedHbmCapacity",
        REWRITE_RISK,
        '40/80 GB as 80 * 1024**3, 80e9 or "80GB" in code',
        "HBM capacity assumed, not queried.",
        "torch.cuda.mem_get_info() / cudaMemGetInfo / hipMemGetInfo",
    ),
    Rule(
        "MEM002",
        "HardcodedPeakThroughput",
        RE_TUNE,
        "A100/H100 peak FLOP/s and bandwidth constants (312e12, 1555e9, ...)",
        "Roofline/MFU uses A100 peaks for every device.",
        "Per-device spec table in a swappable module, keyed by queried name, with graceful None",
    ),
    Rule(
        "MEM003",
        "HardcodedOnChipCapacity",
        RE_TUNE,
        "shared-memory and L2 sizes as 48*1024, 163*1024, 40*1024*1024, or a literal "
        "cudaFuncAttributeMaxDynamicSharedMemorySize",
        "On-chip capacities hard-coded (A100: 164 KB smem/SM, 40 MB L2; MI300: 64 KB LDS).",
        "sharedMemPerBlockOptin, l2CacheSize from cudaGetDeviceProperties/hipGetDeviceProperties",
    ),
    Rule(
        "MEM004",
        "SkuCalibratedBatch",
        RE_TUNE,
        "batch / grad-accum sizes in a file whose comments cite A100 40GB/80GB or 8x A100",
        "Batch sizing calibrated to one SKU's HBM.",
        "accelerate.find_executable_batch_size, memory-probe autotune",
    ),
    Rule(
        "MEM005",
        "SkuNameKeyedBehaviour",
        RE_TUNE,
        'string literals naming SKUs ("NVIDIA A100-SXM4-80GB", "A100" in get_device_name())',
        "Behaviour keyed on marketing names.",
        "Capability/property queries",
    ),
    Rule(
        "MEM006",
        "HardcodedSmCount",
        RE_TUNE,
        "SM-count literals (108, 132) in grid/occupancy math",
        "Grid sized to A100 SM count.",
        "multiProcessorCount query",
    ),
    Rule(
        "WARP001",
        "WarpSizeConstant32",
        RE_TUNE,
        "#define/constexpr *WARP*SIZE* = 32 outside a platform guard",
        "One knob, but every user assumes 32 lanes (AMD CDNA = 64; warpSize is not constexpr "
        "on ROCm ≥ 7).",
        "#ifdef __HIP_PLATFORM_AMD__ 64/warpSize, or a template parameter",
    ),
    Rule(
        "WARP002",
        "FullMask32BitWarpIntrinsic",
        REWRITE_RISK,
        "__shfl*_sync/__ballot_sync/__any_sync/__all_sync/__match_*_sync with 0xffffffff; "
        "__activemask()",
        '32-bit lane masks; HIP masks are 64-bit (hipify flags these "unsupported"; DPCT1023).',
        "Width-generic warp helpers (CUB/hipCUB WarpReduce, cooperative groups tiles sized by "
        "warpSize)",
    ),
    Rule(
        "WARP003",
        "LaneArithmeticFixedTo32",
        REWRITE_RISK,
        "threadIdx.x % 32, & 31, >> 5, / 32, kNWarps * 32, offset loops from 16, "
        "static_assert(... == 32)",
        "Lane/warp arithmetic fused to 32.",
        "Derive from warpSize / template WarpSize",
    ),
    Rule(
        "ASM001",
        "InlinePtx",
        REWRITE_RISK,
        "inline PTX (ld.global.acquire, fence, red., lop3, cvt.rn.relu, max.f16x2)",
        "Inline PTX has no HIP translation.",
        "Compiler builtins / libcu++ atomics behind a backend switch",
    ),
    Rule(
        "ASM002",
        "CacheHintIntrinsics",
        RE_TUNE,
        "__ldg/__ldcs/__ldcg/__ldlu/__stcs/__stcg/__stwt",
        "NVIDIA cache-hint intrinsics; several are unsupported by HIP (hipify warns on __stcs).",
        "Plain loads, or __builtin_nontemporal_* behind a macro",
    ),
    Rule(
        "ARCH001",
        "NvidiaOnlyBuildTargets",
        RE_TUNE,
        "-arch=sm_80, -gencode, CMAKE_CUDA_ARCHITECTURES, TORCH_CUDA_ARCH_LIST, *_CUDA_ARCHS",
        "Build only targets NVIDIA SMs.",
        "Arch list from env/CI matrix; add --offload-arch=gfx942 path",
    ),
    Rule(
        "ARCH002",
        "ComputeCapabilityDispatch",
        RE_TUNE,
        "capability comparisons: get_device_capability() >= (8, 0), prop.major < 8",
        "Dispatch keyed on NVIDIA compute capability.",
        "Feature queries (smem size, dtype support)",
    ),
    Rule(
        "ARCH003",
        "CudaArchGate",
        RE_TUNE,
        "#if/#elif comparing __CUDA_ARCH__",
        "Code exists only for sm80+.",
        "Feature macros with portable fallback",
    ),
    Rule(
        "ARCH004",
        "CudaOnlyToolchain",
        RE_TUNE,
        "CUDAExtension(, CUDA_HOME, nvcc -V, LANGUAGES CUDA, find_package(CUDAToolkit)",
        "CUDA-only toolchain (PyTorch hipifies CUDAExtension on ROCm, unless the sources "
        "contain PTX).",
        "HIP language in CMake, --offload-arch",
    ),
    Rule(
        "DEV001",
        "HardwiredCudaDevice",
        RE_TUNE,
        "'cuda' / 'cuda:N' as device=, torch.device(), .to() or device = ; .to(int)",
        "Device hard-wired (works on ROCm, breaks XPU/MPS/TPU).",
        "torch.accelerator.current_accelerator(), torch.get_default_device()",
    ),
    Rule(
        "DEV002",
        "ImplicitCudaPlacement",
        RE_TUNE,
        ".cuda() calls",
        "Implicit CUDA placement.",
        ".to(device)",
    ),
    Rule(
        "DEV003",
        "CudaNamespaceApi",
        RE_TUNE,
        "torch.cuda.<x> other than is_available, amp, nvtx, nccl",
        "Device/stream/memory APIs tied to the CUDA namespace.",
        "torch.accelerator.*, torch.get_device_module()",
    ),
    Rule(
        "DEV004",
        "CudaNamespacedAmp",
        RE_TUNE,
        "torch.cuda.amp.*",
        "Deprecated CUDA-namespaced AMP.",
        "torch.amp.autocast(device_type), torch.amp.GradScaler(device)",
    ),
    Rule(
        "DEV005",
        "CudaAvailabilityProbe",
        INFO,
        "torch.cuda.is_available()",
        "Single-vendor availability probe.",
        "torch.accelerator.is_available()",
    ),
    Rule(
        "DEV006",
        "CudaVisibleDevices",
        RE_TUNE,
        "CUDA_VISIBLE_DEVICES read or written in code or export",
        "Visibility via NVIDIA env var (ROCm also has HIP_VISIBLE_DEVICES/ROCR_VISIBLE_DEVICES).",
        "Launcher/accelerator-provided visibility var",
    ),
    Rule(
        "DEV007",
        "CudnnNamedKnobs",
        RE_TUNE,
        "assignment to cudnn.benchmark / cudnn.deterministic",
        "cuDNN-named knobs (MIOpen honours them; XPU does not).",
        "torch.use_deterministic_algorithms, backend-agnostic config",
    ),
    Rule(
        "DEP001",
        "CudaOnlyPythonImport",
        REWRITE_RISK,
        "imports of apex, amp_C, flash_attn, bitsandbytes, xformers, cupy, pycuda, numba.cuda, "
        "nvidia.dali, tensorrt, transformer_engine, flashinfer, *_cuda",
        "Hard dependency on CUDA-only libraries.",
        "Optional import plus portable fallback (SDPA, torch norms)",
    ),
    Rule(
        "DEP002",
        "NvidiaWheelPins",
        RE_TUNE,
        "flash-attn, xformers, bitsandbytes, cupy-cuda*, nvidia-*-cu1x, tensorrt, +cu121 pins, "
        "download.pytorch.org/whl/cu1xx",
        "Install graph pins NVIDIA wheels.",
        "Per-platform extras / constraints files",
    ),
    Rule(
        "DEP003",
        "NvidiaBaseImage",
        RE_TUNE,
        "FROM nvidia/cuda:*, FROM nvcr.io/nvidia/*",
        "Image is NVIDIA-only.",
        "Parameterised base image (ROCm/XPU variants)",
    ),
    Rule(
        "DEP004",
        "VendorLibraryHeaders",
        RE_TUNE,
        "#include cudnn.h, cudnn_frontend.h, NvInfer*.h, cusparseLt.h, nvshmem*.h, cufile.h",
        "Vendor library without a drop-in.",
        "MIOpen/hipDNN or framework ops",
    ),
    Rule(
        "TOOL001",
        "NvidiaSmiCalls",
        RE_TUNE,
        "nvidia-smi in subprocess arguments or shell",
        "Telemetry or build logic via NVIDIA CLI.",
        "torch.cuda.mem_get_info, amd-smi/rocm-smi via a platform layer",
    ),
    Rule(
        "TOOL002",
        "NvmlTelemetry",
        RE_TUNE,
        "pynvml imports, nvml*() calls, #include <nvml.h>",
        "NVML telemetry.",
        "amdsmi / platform layer",
    ),
    Rule(
        "TOOL003",
        "NvtxMarkers",
        INFO,
        "torch.cuda.nvtx, nvtxRange*, cudaProfilerStart",
        "Profiler markers (roctx exists).",
        "torch.profiler.record_function",
    ),
)


# Tags a finding can carry (the scanner's detectors set them) that a decision reads.
NCCL_DIRECT = "nccl-direct"  # COMM005: a direct NCCL binding, not an availability probe
CUDNN = "cudnn"
TENSORRT = "tensorrt"
VENDOR_DNN_TAGS = frozenset({CUDNN, TENSORRT})


class RewriteWhen(StrEnum):
    """When a rule's finding makes a move to one target a rewrite."""

    NEVER = "never"
    RISKY = "when rewrite-risk"  # by the rule's default or in the finding's context
    # As RISKY, and also a re-tune finding outside a declared abstraction layer (with `tags`:
    # only one carrying one of them).
    OUTSIDE_LAYER = "outside a layer"
    ALWAYS = "always"


@dataclass(frozen=True)
class Decision:
    """What one rule's finding means for a move to one target."""

    rewrite: RewriteWhen
    decides_re_tune: bool = True  # a re-tune finding of it is among what decides a re-tune
    tags: frozenset[str] = frozenset()

    def rewrites(self, *, severity: str, in_layer: bool, tags: frozenset[str]) -> bool:
        if self.rewrite in (RewriteWhen.NEVER, RewriteWhen.ALWAYS):
            return self.rewrite is RewriteWhen.ALWAYS
        if severity == REWRITE_RISK:
            return True
        return (
            self.rewrite is RewriteWhen.OUTSIDE_LAYER
            and not in_layer
            and (not self.tags or bool(self.tags & tags))
        )


# Another vendor (AMD, Intel): a rewrite-risk finding is a rewrite, except memory sizes, which
# carry over to a part with as much memory; every re-tune finding is a re-tune to make.
# A smaller NVIDIA part: only memory sizes and tiles sized for A100 shared memory matter.
_BY_TARGET = {
    Target.AMD_ROCM: Decision(RewriteWhen.RISKY),
    Target.INTEL_ONEAPI: Decision(RewriteWhen.RISKY),
    Target.NVIDIA_SMALLER: Decision(RewriteWhen.NEVER, decides_re_tune=False),
}
_BY_CATEGORY = {
    ("MEM", Target.AMD_ROCM): Decision(RewriteWhen.NEVER),
    ("MEM", Target.INTEL_ONEAPI): Decision(RewriteWhen.NEVER),
    ("MEM", Target.NVIDIA_SMALLER): Decision(RewriteWhen.NEVER),
}
# RCCL is NCCL's API, oneCCL is not; cuDNN and TensorRT have no oneAPI drop-in. Inside a
# declared abstraction layer they are already behind a switch.
_OUTSIDE_A_LAYER_ON_INTEL = {
    "COMM002": Decision(RewriteWhen.OUTSIDE_LAYER),
    "COMM005": Decision(RewriteWhen.OUTSIDE_LAYER, tags=frozenset({NCCL_DIRECT})),
    "DEP001": Decision(RewriteWhen.OUTSIDE_LAYER, tags=VENDOR_DNN_TAGS),
    "DEP002": Decision(RewriteWhen.OUTSIDE_LAYER, tags=VENDOR_DNN_TAGS),
    "DEP004": Decision(RewriteWhen.OUTSIDE_LAYER, tags=VENDOR_DNN_TAGS),
}
_BY_RULE = {
    **{(rule_id, Target.INTEL_ONEAPI): d for rule_id, d in _OUTSIDE_A_LAYER_ON_INTEL.items()},
    # Sizes that drive batch and buffer sizes, and batches calibrated to one SKU's HBM.
    ("MEM001", Target.NVIDIA_SMALLER): Decision(RewriteWhen.RISKY),
    ("MEM004", Target.NVIDIA_SMALLER): Decision(RewriteWhen.ALWAYS),
    ("TC005", Target.NVIDIA_SMALLER): Decision(RewriteWhen.NEVER),
}

# Rule id -> target -> what its finding decides: every rule, every target.
DECISIONS: dict[str, dict[Target, Decision]] = {
    rule.id: {
        target: _BY_RULE.get((rule.id, target))
        or _BY_CATEGORY.get((rule.category, target))
        or _BY_TARGET[target]
        for target in Target
    }
    for rule in RULES.values()
}


class Fact(StrEnum):
    """What a team can say about its stack (the questionnaire) that can decide a rewrite."""

    HAND_TILED_MATMULS = "hand_tiled_matmuls"
    COMPILE_TIME_TF32 = "compile_time_tf32"
    NVLINK_COLLECTIVES = "nvlink_collectives"
    DIRECT_NCCL = "direct_nccl"
    CUTLASS_KERNELS = "cutlass_kernels"
    CUDA_CPP_KERNELS = "cuda_cpp_kernels"
    TENSORRT = "tensorrt"
    FP8 = "fp8"
    HARD_CODED_MEMORY = "hard_coded_memory"


@dataclass(frozen=True)
class StackFact:
    """`why` as a verdict says it. Where findings stand for the fact (`rule_ids`, `tags`), it
    decides a rewrite on the targets where one of them would: at the rule's default severity,
    outside any abstraction layer. Where none does, `targets` says where it decides one."""

    why: str
    rule_ids: tuple[str, ...] = ()
    tags: frozenset[str] = frozenset()
    targets: frozenset[Target] = frozenset()

    def rewrites_on(self, target: Target) -> bool:
        return target in self.targets or any(
            DECISIONS[rule_id][target].rewrites(
                severity=RULES[rule_id].severity, in_layer=False, tags=self.tags
            )
            for rule_id in self.rule_ids
        )


_INTEL = frozenset({Target.INTEL_ONEAPI})

# In the order a verdict lists them.
STACK_FACTS: dict[Fact, StackFact] = {
    Fact.HAND_TILED_MATMULS: StackFact(
        "hand-tiled tensor-core matmuls (TC): the fragment shapes and ISA differ",
        ("TC001", "TC002", "TC003"),
    ),
    Fact.COMPILE_TIME_TF32: StackFact(
        "TF32 compiled in (PREC003): not a policy the target can change", ("PREC003",)
    ),
    Fact.NVLINK_COLLECTIVES: StackFact(
        "collectives that assume NVLink/NVSwitch (COMM003)", ("COMM003",)
    ),
    Fact.DIRECT_NCCL: StackFact(
        "NCCL called directly (COMM002): oneCCL is not API-compatible", ("COMM002",)
    ),
    # A stack built on CUTLASS kernels, not one CUTLASS tile config (a TC004 finding): the
    # kernels themselves have no SYCL port.
    Fact.CUTLASS_KERNELS: StackFact("CUTLASS kernels (TC004): no SYCL port", targets=_INTEL),
    Fact.CUDA_CPP_KERNELS: StackFact(
        "hand-written CUDA C++ kernels: SYCL needs a port", targets=_INTEL
    ),
    Fact.TENSORRT: StackFact(
        "TensorRT (DEP004): no oneAPI equivalent", ("DEP004",), tags=frozenset({TENSORRT})
    ),
    Fact.FP8: StackFact("FP8 relied on: Intel Max 1550 has no FP8", targets=_INTEL),
    Fact.HARD_CODED_MEMORY: StackFact(
        "memory sizes hard-coded (MEM001): they drive batch and buffer sizes", ("MEM001",)
    ),
}
