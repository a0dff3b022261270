"""Each rule's page: what it finds, why it locks code in, the portable form, and an example.

The first three are the catalogue's own text (advisor.domain.portability.rules); the catalogue
has no examples, so they are written here, one short file each that the scanner flags with the
rule (tests/jobs/test_codescan_rule_pages.py scans every one). A rule whose alternative is "—"
(a portable-intent API) gets a sentence saying so instead.
"""

from dataclasses import dataclass

from advisor.domain.portability.rules import RULES, Rule

NO_ALTERNATIVE = "—"
CATEGORY_NAMES = {
    "TC": "tensor-core tiling",
    "PREC": "precision",
    "COMM": "collectives",
    "MEM": "memory and bandwidth",
    "WARP": "warp width",
    "ASM": "inline assembly",
    "ARCH": "build targets and capability gates",
    "DEV": "device strings and CUDA namespaces",
    "DEP": "CUDA-only dependencies",
    "TOOL": "NVIDIA tools",
}


@dataclass(frozen=True)
class RuleExample:
    file_name: str  # the example's language comes from its name, as in a scan
    code: str


@dataclass(frozen=True)
class RulePage:
    rule: Rule
    what_it_finds: str
    why_it_locks_in: str
    portable_form: str
    example: RuleExample

    @property
    def category_name(self) -> str:
        return CATEGORY_NAMES[self.rule.category]


def _example(file_name: str, *lines: str) -> RuleExample:
    return RuleExample(file_name, "\n".join(lines) + "\n")


EXAMPLES = {
    "TC001": _example(
        "gemm.cu",
        "#include <mma.h>",
        "using namespace nvcuda;",
        "__global__ void tile(const half* a) {",
        "  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a_frag;",
        "}",
    ),
    "TC002": _example(
        "mma.cu",
        "__device__ void mma(unsigned* a, unsigned* b, float* c) {",
        '  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, '
        '{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\\n"',
        '      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])',
        '      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));',
        "}",
    ),
    "TC003": _example(
        "traits.cuh",
        "#include <cute/tensor.hpp>",
        "using namespace cute;",
        "using TiledMma = TiledMMA<MMA_Atom<SM80_16x8x16_F32F16F16F32_TN>, Layout<Shape<_4>>>;",
    ),
    "TC004": _example(
        "gemm.cu",
        "#include <cutlass/gemm/device/gemm.h>",
        "using Gemm = cutlass::gemm::device::Gemm<",
        "    cutlass::half_t, cutlass::layout::RowMajor, cutlass::half_t,",
        "    cutlass::layout::ColumnMajor, float, cutlass::layout::RowMajor, float,",
        "    cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80>;",
    ),
    "TC005": _example(
        "launch.py",
        "import triton",
        "",
        "def launch(x, y, grid):",
        "    add_kernel[grid](x, y, x.numel(), BLOCK_M=128, num_warps=4)",
    ),
    "TC006": _example(
        "pipeline.cu",
        "#include <cuda/pipeline>",
        "__global__ void copy(const float* src, float* dst);",
    ),
    "PREC001": _example(
        "train.py", "import torch", "", "torch.backends.cuda.matmul.allow_tf32 = True"
    ),
    "PREC002": _example(
        "train.py", "import torch", "", 'torch.set_float32_matmul_precision("high")'
    ),
    "PREC003": _example(
        "gemm.cu",
        "#include <cublas_v2.h>",
        "void gemm(cublasHandle_t h) {",
        "  cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH);",
        "}",
    ),
    "PREC004": _example(
        "precision.py",
        "import torch",
        "",
        "if torch.cuda.get_device_capability() >= (8, 0):",
        "    dtype = torch.bfloat16",
    ),
    "PREC005": _example(
        "test_numerics.py",
        "import torch",
        "",
        "def test_matmul(a, b, expected):",
        "    # Tolerance calibrated on A100 with TF32 enabled.",
        "    atol = 1e-2",
        "    torch.testing.assert_close(a @ b, expected, atol=atol)",
    ),
    "COMM001": _example(
        "ddp.py",
        "import torch.distributed as dist",
        "",
        "def setup(rank, world_size):",
        '    dist.init_process_group(backend="nccl", rank=rank, world_size=world_size)',
    ),
    "COMM002": _example(
        "allreduce.cu",
        "#include <nccl.h>",
        "void allreduce(float* buf, size_t n, ncclComm_t comm, cudaStream_t stream) {",
        "  ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, comm, stream);",
        "}",
    ),
    "COMM003": _example(
        "ipc.cu",
        "void share(void* ptr) {",
        "  cudaIpcMemHandle_t handle;",
        "  cudaIpcGetMemHandle(&handle, ptr);",
        "}",
    ),
    "COMM004": _example("launch.py", "import os", "", 'os.environ["NCCL_P2P_DISABLE"] = "1"'),
    "COMM005": _example(
        "comm.py",
        "import torch.distributed as dist",
        "from torch.cuda import nccl",
        "",
        "def check():",
        "    if dist.is_nccl_available():",
        "        print(nccl.version())",
    ),
    "COMM006": _example(
        "pretrain.sh",
        "#!/bin/bash",
        "GPUS_PER_NODE=8",
        "torchrun --nproc_per_node $GPUS_PER_NODE pretrain_gpt.py \\",
        "    --tensor-model-parallel-size 8",
    ),
    "MEM001": _example(
        "budget.py",
        "import torch",
        "",
        "HBM_BYTES = 80 * 1024**3",
        "",
        "def max_tokens(bytes_per_token):",
        "    return HBM_BYTES // bytes_per_token",
    ),
    "MEM002": _example(
        "mfu.py",
        "A100_BF16_PEAK_FLOPS = 312e12",
        "",
        "def mfu(flops_per_second):",
        "    return flops_per_second / A100_BF16_PEAK_FLOPS",
    ),
    "MEM003": _example(
        "smem.cu",
        "void configure(void (*kernel)(float*)) {",
        "  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 163 * 1024);",
        "}",
    ),
    "MEM004": _example(
        "config.py",
        "# Tuned for 8x A100 80GB",
        "batch_size = 32",
        "gradient_accumulation_steps = 4",
    ),
    "MEM005": _example(
        "tuning.py",
        "import torch",
        "",
        "def block_size():",
        '    if "A100" in torch.cuda.get_device_name():',
        "        return 128",
        "    return 64",
    ),
    "MEM006": _example(
        "launch.cu", "void launch(float* x) {", "  persistent_kernel<<<108, 256>>>(x);", "}"
    ),
    "WARP001": _example("common.cuh", "#define WARP_SIZE 32"),
    "WARP002": _example(
        "reduce.cu",
        "__device__ float warp_sum(float v) {",
        "  for (int offset = 16; offset > 0; offset /= 2)",
        "    v += __shfl_xor_sync(0xffffffff, v, offset);",
        "  return v;",
        "}",
    ),
    "WARP003": _example(
        "lanes.cu",
        "__global__ void k(float* x) {",
        "  int lane = threadIdx.x % 32;",
        "  int warp = threadIdx.x >> 5;",
        "}",
    ),
    "ASM001": _example(
        "atomics.cu",
        "__device__ int load_acquire(const int* p) {",
        "  int v;",
        '  asm volatile("ld.global.acquire.gpu.b32 %0, [%1];" : "=r"(v) : "l"(p));',
        "  return v;",
        "}",
    ),
    "ASM002": _example(
        "loads.cu",
        "__global__ void k(const float* __restrict__ x, float* y) {",
        "  y[threadIdx.x] = __ldg(&x[threadIdx.x]);",
        "}",
    ),
    "ARCH001": _example(
        "CMakeLists.txt",
        "cmake_minimum_required(VERSION 3.24)",
        "set(CMAKE_CUDA_ARCHITECTURES 80 90)",
    ),
    "ARCH002": _example(
        "dispatch.py",
        "import torch",
        "",
        "major, minor = torch.cuda.get_device_capability()",
        "if major >= 8:",
        "    use_fast_path = True",
    ),
    "ARCH003": _example(
        "gate.cu",
        "__device__ void convert(float* x) {",
        "#if __CUDA_ARCH__ >= 800",
        "  fast_path(x);",
        "#endif",
        "}",
    ),
    "ARCH004": _example(
        "CMakeLists.txt",
        "cmake_minimum_required(VERSION 3.24)",
        "project(fused LANGUAGES CXX CUDA)",
    ),
    "DEV001": _example("train.py", "import torch", "", 'x = torch.zeros(3, device="cuda")'),
    "DEV002": _example("train.py", "def run(model, batch):", "    model.cuda()"),
    "DEV003": _example(
        "train.py", "import torch", "", "def step():", "    torch.cuda.synchronize()"
    ),
    "DEV004": _example("train.py", "import torch", "", "scaler = torch.cuda.amp.GradScaler()"),
    "DEV005": _example(
        "train.py", "import torch", "", "if torch.cuda.is_available():", '    print("gpu")'
    ),
    "DEV006": _example("run.sh", "#!/bin/bash", "export CUDA_VISIBLE_DEVICES=0,1"),
    "DEV007": _example("train.py", "import torch", "", "torch.backends.cudnn.benchmark = True"),
    "DEP001": _example("model.py", "import flash_attn"),
    "DEP002": _example("requirements.txt", "torch==2.3.0+cu121", "flash-attn==2.5.8"),
    "DEP003": _example("Dockerfile", "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04"),
    "DEP004": _example("conv.cpp", "#include <cudnn.h>"),
    "TOOL001": _example("env.sh", "#!/bin/bash", "nvidia-smi"),
    "TOOL002": _example("telemetry.py", "import pynvml", "", "pynvml.nvmlInit()"),
    "TOOL003": _example("profile.py", "import torch", "", 'torch.cuda.nvtx.range_push("step")'),
}


def _portable_form(rule: Rule) -> str:
    if rule.alternative == NO_ALTERNATIVE:
        return (
            "Nothing to change: this is the portable-intent API. The scanner records it so "
            "that the scorecard can count the code's portable choices."
        )
    return rule.alternative


def rule_page(rule_id: str) -> RulePage:
    """The page of one catalogue rule; KeyError for an id the catalogue does not have."""
    rule = RULES[rule_id]
    return RulePage(
        rule=rule,
        what_it_finds=rule.summary,
        why_it_locks_in=rule.why,
        portable_form=_portable_form(rule),
        example=EXAMPLES[rule_id],
    )


def rule_pages() -> list[RulePage]:
    """Every rule's page, in the catalogue's order."""
    return [rule_page(rule_id) for rule_id in RULES]
