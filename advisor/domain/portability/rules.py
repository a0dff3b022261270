"""The rule catalogue of shared/portability_rules.md: ids, default severities, Why and the
portable alternative, as written there. Rule ids are the contract with reports and SARIF;
the code scanner (jobs/domain/codescan) applies the rules, and decisions.py says what each
rule's finding decides for a move to each target.

Here the rules on what code assumes of the hardware (TC, PREC, COMM, MEM, WARP, ASM, ARCH);
stack_rules.py holds those on the software around it (DEV, DEP, TOOL). RULES has them all,
in the spec's order, which is SARIF's rule index.

A rule whose severity depends on context ("rewrite if compile-time, re-tune if runtime") has
the first form as its default; findings that land on the other one say why in `context`.
"""

from advisor.domain.portability.rule import INFO, RE_TUNE, REWRITE_RISK, SEVERITIES, Rule
from advisor.domain.portability.stack_rules import STACK_RULES

__all__ = ["INFO", "REWRITE_RISK", "RE_TUNE", "RULES", "SEVERITIES", "Rule"]


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
    *STACK_RULES,
)
