"""Near misses seen in real repositories stay quiet, the true positives beside them still fire;
findings keep the lines around them and a fingerprint that survives moved lines."""

from jobs.domain.codescan import scan_paths
from tests.helpers import findings_of as of
from tests.helpers import scan_files as scan


def test_a_cuda_library_in_find_packages_exclude_is_not_a_dependency(tmp_path):
    report = scan(
        tmp_path,
        {
            "setup.py": """
                from setuptools import find_packages, setup
                setup(
                    name="mylib",
                    packages=find_packages(exclude=["flash_attn", "xformers*", "tests"]),
                    install_requires=["torch", "bitsandbytes>=0.41"],
                )
            """
        },
    )
    assert [(f.line, f.code) for f in of(report, "DEP002")] == [
        (5, 'install_requires=["torch", "bitsandbytes>=0.41"],')
    ]


def test_exclude_lists_in_pyproject_and_setup_cfg_are_not_dependencies(tmp_path):
    report = scan(
        tmp_path,
        {
            "pyproject.toml": """
                [project]
                name = "mylib"
                dependencies = ["flash-attn>=2.5"]
                [tool.setuptools.packages.find]
                exclude = ["flash_attn*", "tests"]
            """,
            "setup.cfg": """
                [options]
                install_requires =
                    xformers==0.0.26
                [options.packages.find]
                exclude =
                    xformers
                    tests
            """,
        },
    )
    assert sorted((f.file, f.line) for f in of(report, "DEP002")) == [
        ("pyproject.toml", 3),
        ("setup.cfg", 3),
    ]


def test_the_repos_own_modules_are_not_vendor_dependencies(tmp_path):
    """`cuda_tools-main/` holds the repo's own fused_cuda module and a namespace package
    tools_cuda/ (no __init__.py); importing them is not a CUDA-only dependency."""
    report = scan(
        tmp_path,
        {
            "cuda_tools-main/fused_cuda.py": "X = 1\n",
            "cuda_tools-main/tools_cuda/ops.py": "Y = 2\n",
            "cuda_tools-main/train.py": """
                import torch
                import cuda_tools
                import fused_cuda
                from tools_cuda import ops
                import flash_attn
            """,
        },
    )
    assert [f.code for f in of(report, "DEP001")] == ["import flash_attn"]


def test_a_folder_named_like_a_library_deep_in_the_repo_does_not_hide_the_library(tmp_path):
    report = scan(
        tmp_path,
        {
            "repo/setup.py": "from setuptools import setup\n",
            "repo/benchmarks/xformers/bench.py": "import torch\nimport xformers.ops\n",
        },
    )
    assert [f.file for f in of(report, "DEP001")] == ["repo/benchmarks/xformers/bench.py"]


def test_int4_packing_strides_are_not_warp_width(tmp_path):
    report = scan(
        tmp_path,
        {
            "unpack.cu": """
                __global__ void unpack(const int* packed, half* out, int n) {
                  int stride = 32 * n / 4;
                  int offset = threadIdx.x * 32 / 8;
                  int bits = (tid * 32) >> 2;
                  int lane = threadIdx.x % 32;
                  int base = threadIdx.x * 32;
                }
            """
        },
    )
    assert [f.line for f in of(report, "WARP003")] == [5, 6]


def test_a_finding_keeps_three_lines_either_side(tmp_path):
    source = "\n".join(f"// line {n}" for n in range(1, 11)) + "\n#include <nccl.h>\n// after\n"
    (tmp_path / "comm.cu").write_text(source)
    [finding] = of(scan_paths(tmp_path), "COMM002")
    assert finding.line == 11
    assert finding.snippet_start_line == 8
    assert finding.snippet.split("\n") == [
        "// line 8",
        "// line 9",
        "// line 10",
        "#include <nccl.h>",
        "// after",
    ]


def test_the_fingerprint_ignores_the_line_number_and_whitespace(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "train.py").write_text("import torch\nx = torch.zeros(3, device='cuda')\n")
    (tmp_path / "b" / "train.py").write_text(
        "import torch\n\n\ny = 1\n  x = torch.zeros(3,   device='cuda')\n"
    )
    [before] = of(scan_paths(tmp_path / "a"), "DEV001")
    [after] = of(scan_paths(tmp_path / "b"), "DEV001")
    assert before.line != after.line
    assert before.fingerprint == after.fingerprint


def test_identical_lines_of_one_file_get_their_own_fingerprints(tmp_path):
    (tmp_path / "train.py").write_text("import torch\nmodel.cuda()\nmodel.cuda()\n")
    keys = [f.fingerprint for f in of(scan_paths(tmp_path), "DEV002")]
    assert len(keys) == 2 and len(set(keys)) == 2
    assert [key.rsplit(":", 1)[1] for key in keys] == ["1", "2"]
