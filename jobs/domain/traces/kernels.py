"""What a GPU event's name tells: its type exactly as Holistic Trace Analysis 0.5.0 decides it
(hta/utils/utils.py), the copy direction, and for matrix math the precision it runs in."""

import re
from enum import StrEnum


class KernelType(StrEnum):
    COMPUTATION = "computation"
    COMMUNICATION = "communication"
    MEMORY = "memory"
    # HTA's OTHER: names containing "Sync" (cuda_sync rows such as "Stream Sync") or "Memcpy"
    # not at the start. They count as busy GPU time but not as compute.
    OTHER = "other"


_COMMUNICATION = re.compile(r"^nccl.*Kernel")  # RCCL kernels on AMD are named nccl* too
_MEMORY = re.compile(r"^(Memcpy|Memset|dma)")
_NOT_COMPUTE = re.compile(r".*(Memcpy|Sync)")
_MEMCPY_KIND = re.compile(r"^Memcpy (\w+)")


def kernel_type(name: str) -> KernelType:
    if _COMMUNICATION.match(name):
        return KernelType.COMMUNICATION
    if _MEMORY.match(name):
        return KernelType.MEMORY
    if _NOT_COMPUTE.match(name):
        return KernelType.OTHER
    return KernelType.COMPUTATION


def memcpy_kind(name: str) -> str | None:
    """The copy direction: "Memcpy HtoD (Pageable -> Device)" gives "HtoD"; None if no copy."""
    if not name.startswith("Memcpy"):
        return None
    match = _MEMCPY_KIND.match(name)
    return match.group(1) if match else "other"


# Matrix math: cuBLAS/cuBLASLt (sgemm, xmma, nvjet on Hopper), CUTLASS, cuDNN convolutions
# (cudnn_<arch>_scudnn..., implicit_convolve_sgemm, fprop/dgrad/wgrad engines, winograd),
# attention (flash, fmha, memory-efficient attention), Triton matmul templates and
# rocBLAS/Tensile GEMMs (Cijk_...). Everything else that computes (elementwise, batch norm,
# reductions, layout transforms) does little arithmetic per byte moved.
_MATH = re.compile(
    r"gemm|gemv|matmul|xmma|nvjet|cutlass|cudnn_|fprop|dgrad|wgrad|winograd|convolve"
    r"|flash|fmha|attention|triton_tem|cijk_"
)
# Double precision, as cuBLAS (volta_dgemm_64x64_nn, sm80_xmma_gemm_f64f64_..., ampere DMMA),
# cuSOLVER and templated kernels (saxpy(double *, ...), axpy_kernel_val<double, double, 0>) name
# it: the mark of scientific code rather than ML. "double" only as a word, so a
# double-buffered kernel is not taken for one.
_FP64 = re.compile(r"dgemm|zgemm|dgemv|dmma|dtrsm|dsyrk|dpotrf|f64|fp64|(?<![a-z])double(?![a-z_])")
# First match wins, so mixed names ("sm80_xmma_gemm_f16f16_f16f32_f32", "..._tf32f32_f32") take
# the input precision, which the tensor cores run at, not the accumulator's.
_PRECISIONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("fp8", re.compile(r"fp8|e4m3|e5m2|f8f8")),
    ("bf16", re.compile(r"bf16|bfloat16|_bbs_|_bss_")),
    ("tf32", re.compile(r"tf32|tensorop_s1688")),
    ("fp16", re.compile(r"(?<![a-z0-9])(f16|fp16)|half|h884|h1688|h16816|hgemm|_hhs_|_hss_|_hb_")),
    ("fp64", _FP64),
    ("fp32", re.compile(r"sgemm|scudnn|(?<![a-z0-9])(f32f32|fp32)|<float\b|float,|_sb_")),
)


def is_matrix_math(name: str) -> bool:
    """GEMM, convolution or attention: the kernels that tensor-core throughput bounds."""
    return _MATH.search(name.lower()) is not None


def math_precision(name: str) -> str:
    """The precision a matrix-math kernel's name reveals: "volta_sgemm_128x64_nn" is fp32,
    "ampere_bf16_s16816gemm..." bf16, "sm80_xmma_gemm_f16f16..." fp16; "unknown" otherwise."""
    lowered = name.lower()
    for precision, pattern in _PRECISIONS:
        if pattern.search(lowered):
            return precision
    return "unknown"


def names_fp64(name: str) -> bool:
    """Whether a kernel's name says it computes in double precision (any kernel, not only
    matrix math): "saxpy(double *, double *, double *, double, int)" does."""
    return _FP64.search(name.lower()) is not None
