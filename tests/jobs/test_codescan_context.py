"""Context rules: what changes a finding's severity, or suppresses it, beyond its pattern."""

import pytest

from tests.helpers import findings_of as of
from tests.helpers import scan_files as scan

# --- preprocessor gates and platform guards ------------------------------------------------


def test_a_cuda_arch_gate_with_an_else_is_re_tune(tmp_path):
    report = scan(
        tmp_path,
        {
            "gate.cu": """
                __device__ void f(float* x) {
                #if __CUDA_ARCH__ >= 800
                  fast(x);
                #else
                  slow(x);
                #endif
                }
            """
        },
    )
    [gate] = of(report, "ARCH003")
    assert (gate.severity, gate.line, gate.context) == ("re-tune", 2, "")


def test_a_cuda_arch_gate_without_an_else_is_rewrite_risk(tmp_path):
    report = scan(
        tmp_path,
        {
            "gate.cu": """
                __device__ void f(float* x) {
                #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
                  fast(x);
                #endif
                }
            """
        },
    )
    [gate] = of(report, "ARCH003")
    assert gate.severity == "rewrite-risk"
    assert "no #else" in gate.context


def test_an_elif_chain_ending_in_else_is_re_tune(tmp_path):
    report = scan(
        tmp_path,
        {
            "gate.cu": """
                #if __CUDA_ARCH__ >= 900
                int path = 9;
                #elif __CUDA_ARCH__ >= 800
                int path = 8;
                #else
                int path = 0;
                #endif
            """
        },
    )
    assert [(f.line, f.severity) for f in of(report, "ARCH003")] == [(1, "re-tune"), (3, "re-tune")]


@pytest.mark.parametrize(
    "guard",
    ["#ifdef __HIP_PLATFORM_AMD__", "#if defined(USE_ROCM)", "#ifndef __HIPCC__", "#if USE_ROCM"],
)
def test_code_in_either_branch_of_a_platform_guard_with_an_else_is_not_reported(tmp_path, guard):
    report = scan(
        tmp_path,
        {
            "reduce.cu": f"""
                __device__ float sum(float v) {{
                {guard}
                  v += __shfl_xor_sync(0xffffffff, v, 1);
                  asm volatile("red.global.add.f32 [%0], %1;" :: "l"(p), "f"(v));
                #else
                  v += __shfl_xor_sync(0xffffffff, v, 2);
                  int lane = threadIdx.x % 32;
                #endif
                  return v;
                }}
            """
        },
    )
    assert report.findings == []


def test_a_rocm_only_branch_is_not_reported_but_a_cuda_only_one_is(tmp_path):
    report = scan(
        tmp_path,
        {
            "k.cu": """
                #ifdef USE_ROCM
                #define MASK_ALL 0xffffffff
                __device__ float a(float v) { return __shfl_xor_sync(0xffffffff, v, 1); }
                #endif
                #ifndef USE_ROCM
                __device__ float b(float v) { return __shfl_xor_sync(0xffffffff, v, 1); }
                #endif
            """
        },
    )
    assert [f.line for f in of(report, "WARP002")] == [6]


def test_code_under_if_0_is_dead(tmp_path):
    report = scan(tmp_path, {"k.cu": "#if 0\n#include <nccl.h>\n#endif\n"})
    assert report.findings == []


def test_a_python_hip_check_with_an_else_guards_both_branches(tmp_path):
    report = scan(
        tmp_path,
        {
            "ops.py": """
                import torch

                if torch.version.hip:
                    import amd_kernels as kernels
                else:
                    import flash_attn as kernels
                    torch.cuda.synchronize()
                torch.cuda.synchronize()
            """
        },
    )
    assert [(f.rule_id, f.line) for f in report.findings] == [("DEV003", 8)]


# --- Python context -------------------------------------------------------------------------


def test_a_guarded_optional_import_is_re_tune(tmp_path):
    report = scan(
        tmp_path,
        {
            "model.py": """
                try:
                    import xformers.ops as xops
                except ImportError:
                    xops = None
            """
        },
    )
    [dep] = of(report, "DEP001")
    assert dep.severity == "re-tune"
    assert dep.context == "inside try/except ImportError with a fallback"


def test_an_import_whose_except_only_re_raises_stays_rewrite_risk(tmp_path):
    report = scan(
        tmp_path,
        {
            "model.py": """
                try:
                    import apex
                except ImportError as error:
                    raise RuntimeError("apex is required") from error
            """
        },
    )
    [dep] = of(report, "DEP001")
    assert (dep.severity, dep.context) == ("rewrite-risk", "")


def test_an_import_behind_an_availability_check_is_re_tune(tmp_path):
    report = scan(
        tmp_path,
        {
            "model.py": """
                from transformers.utils import is_flash_attn_2_available

                if is_flash_attn_2_available():
                    from flash_attn import flash_attn_func
            """
        },
    )
    [dep] = of(report, "DEP001")
    assert (dep.severity, dep.context) == ("re-tune", "inside an availability check")


def test_imports_of_the_repos_own_package_are_ignored(tmp_path):
    report = scan(
        tmp_path,
        {
            "flash_attn/__init__.py": "from flash_attn.flash_attn_interface import mha_fwd\n",
            "flash_attn/flash_attn_interface.py": "import flash_attn_2_cuda as flash_attn_cuda\n",
            "flash_attn/layers/__init__.py": "",
            "setup.py": """
                from torch.utils.cpp_extension import CUDAExtension
                ext = CUDAExtension(name="flash_attn_2_cuda", sources=["csrc/flash_api.cpp"])
            """,
            "tests/test_flash.py": """
                import flash_attn
                from flash_attn.layers import rotary
                import xformers
            """,
        },
    )
    assert [(f.file, f.line) for f in of(report, "DEP001")] == [("tests/test_flash.py", 3)]


def test_a_package_named_in_pyproject_is_the_repos_own(tmp_path):
    report = scan(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "transformer-engine"\nversion = "1.0"\n',
            "examples/run.py": "import transformer_engine.pytorch as te\n",
        },
    )
    assert of(report, "DEP001") == []
    assert of(report, "DEP002") == []


def test_device_type_comparisons_are_guards_not_locks(tmp_path):
    report = scan(
        tmp_path,
        {
            "train.py": """
                def pick(device, device_type):
                    if device_type == "cuda":
                        pass
                    match device.type:
                        case "cuda":
                            pass
                    enabled = device.type in ("cuda", "xpu")
                    device = "cuda" if torch.cuda.is_available() else "cpu"
            """
        },
    )
    assert [f.line for f in of(report, "DEV001")] == [8]


def test_a_backend_reassigned_from_configuration_is_not_reported(tmp_path):
    report = scan(
        tmp_path,
        {
            "ddp.py": """
                def setup(args):
                    backend = "nccl"
                    if args.backend:
                        backend = args.backend
                    dist.init_process_group(backend=backend)

                def fixed():
                    dist_backend = "nccl"
                    dist.init_process_group(backend=dist_backend)
            """
        },
    )
    assert [f.line for f in of(report, "COMM001")] == [8]


def test_a_tf32_switch_from_configuration_is_info(tmp_path):
    report = scan(tmp_path, {"t.py": "torch.backends.cuda.matmul.allow_tf32 = cfg.allow_tf32\n"})
    [switch] = of(report, "PREC001")
    assert (switch.severity, switch.context) == ("info", "value comes from configuration")


def test_hbm_capacity_that_drives_sizes_is_rewrite_risk_else_re_tune(tmp_path):
    report = scan(
        tmp_path,
        {
            "sizes.py": """
                # KV-cache budget of the GPU
                KV_BUDGET = 80 * 1024**3
                blocks = KV_BUDGET // block_bytes
                SPECS = {"a100": {"memory": 80e9}}
                if total > 40e9:
                    pass
            """
        },
    )
    assert [(f.line, f.severity) for f in of(report, "MEM001")] == [
        (2, "rewrite-risk"),
        (4, "re-tune"),
        (5, "rewrite-risk"),
    ]


def test_code_inside_an_f_string_interpolation_is_code(tmp_path):
    report = scan(tmp_path, {"log.py": 'print(f"used {torch.cuda.memory_allocated()} bytes")\n'})
    assert [f.rule_id for f in report.findings] == ["DEV003"]


# --- CUDA context ---------------------------------------------------------------------------


def test_the_repos_own_nccl_check_macro_is_not_comm002(tmp_path):
    report = scan(
        tmp_path,
        {
            "common.h": "#define ncclCheck(cmd) do { ncclResult_t r = cmd; } while (0)\n",
            "train.cu": """
                #include "common.h"
                void step(int status) {
                  ncclCheck(status);
                  ncclCheck(ncclAllReduce(a, b, n, ncclFloat, ncclSum, comm, stream));
                }
            """,
        },
    )
    assert [(f.file, f.line) for f in of(report, "COMM002")] == [("train.cu", 4)]


def test_a_named_full_mask_defined_by_the_repo_is_warp002(tmp_path):
    report = scan(
        tmp_path,
        {
            "masks.h": "#define FINAL_MASK 0xffffffff\n",
            "reduce.cu": """
                __device__ float sum(float v, unsigned active) {
                  v += __shfl_xor_sync(FINAL_MASK, v, 16);
                  v += __shfl_xor_sync(active, v, 8);
                  return v;
                }
            """,
        },
    )
    assert [f.line for f in of(report, "WARP002")] == [2]


def test_cuda_extension_is_rewrite_risk_when_the_repo_holds_ptx(tmp_path):
    setup = 'ext = CUDAExtension(name="ops", sources=["ops.cu"])\n'
    plain = scan(tmp_path / "plain", {"setup.py": setup, "ops.cu": "__global__ void k() {}\n"})
    [extension] = of(plain, "ARCH004")
    assert (extension.severity, extension.context) == ("re-tune", "")

    ptx = 'asm volatile("cvt.rn.relu.f16x2.f32 %0, %1, %2;" : "=r"(o) : "f"(a), "f"(b));'
    with_ptx = scan(
        tmp_path / "ptx", {"setup.py": setup, "ops.cu": f"__device__ void k() {{ {ptx} }}\n"}
    )
    [extension] = of(with_ptx, "ARCH004")
    assert extension.severity == "rewrite-risk"
    assert "inline PTX (ops.cu:1)" in extension.context


def test_tiles_in_a_kernel_body_are_rewrite_risk_in_a_launch_table_re_tune(tmp_path):
    report = scan(
        tmp_path,
        {
            "fmha.cu": """
                __global__ void kernel(float* x) {
                  constexpr int kBlockM = 128;
                }
                void launch(Params& p) {
                  run<Kernel_traits<128, 64, 4, half>>(p);
                }
            """
        },
    )
    assert [(f.line, f.severity) for f in of(report, "TC005")] == [
        (2, "rewrite-risk"),
        (5, "re-tune"),
    ]


def test_runtime_selected_tf32_is_re_tune(tmp_path):
    report = scan(
        tmp_path,
        {
            "gemm.cu": """
                cublasComputeType_t compute(bool allow_tf32) {
                  return allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
                }
                using Gemm = cutlass::gemm::device::Gemm<float, Row, float, Row, float, Row, float,
                    cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
                    cutlass::gemm::GemmShape<128, 128, 16>, cutlass::gemm::GemmShape<64, 64, 16>,
                    cutlass::gemm::GemmShape<16, 8, 8>>;
            """
        },
    )
    assert [(f.line, f.severity) for f in of(report, "PREC003")] == [
        (2, "re-tune"),
        (5, "rewrite-risk"),
    ]
    assert of(report, "PREC003")[0].context == "selected at run time"


def test_nvlink_paths_behind_a_setting_are_re_tune(tmp_path):
    report = scan(
        tmp_path,
        {
            "allreduce.py": """
                def pick(args, ids):
                    if args.use_custom_allreduce and is_full_nvlink(ids):
                        return "custom"
                    return "nccl"
            """
        },
    )
    [nvlink] = of(report, "COMM003")
    assert nvlink.severity == "re-tune"
    assert nvlink.context.startswith("a setting selects it")


# --- declared abstraction layers --------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "marker"),
    [
        ("accelerator/cuda_accelerator.py", ""),
        ("mylib/backends/cuda.py", ""),
        ("mylib/kernels_backend.py", ""),
        ("mylib/ops.py", "# portability: abstraction-layer\n"),
    ],
)
def test_a_declared_abstraction_layer_turns_rewrite_risk_into_re_tune(tmp_path, path, marker):
    report = scan(tmp_path, {path: marker + "import apex\n"})
    [dep] = of(report, "DEP001")
    assert dep.severity == "re-tune"
    assert "declared abstraction layer" in dep.context


def test_a_layer_marker_in_a_cuda_comment_counts_but_in_a_string_does_not(tmp_path):
    kernel = '__device__ void f() { asm volatile("fence.acq_rel.gpu;"); }\n'
    report = scan(
        tmp_path,
        {
            "layer.cu": "// portability: abstraction-layer\n" + kernel,
            "other.cu": 'const char* s = "portability: abstraction-layer";\n' + kernel,
        },
    )
    assert [(f.file, f.severity) for f in of(report, "ASM001")] == [
        ("layer.cu", "re-tune"),
        ("other.cu", "rewrite-risk"),
    ]
