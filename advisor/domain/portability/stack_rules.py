"""The catalogue's rules on the software around the kernels (shared/portability_rules.md's
DEV, DEP and TOOL rules): device selection in framework code, dependencies and images, and
vendor tools. rules.py lists them after the hardware rules, in the spec's order."""

from advisor.domain.portability.rule import INFO, RE_TUNE, REWRITE_RISK, Rule

STACK_RULES: tuple[Rule, ...] = (
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
