"""Whatever text an upload holds, scanning it never raises: a file of fragments of every
construct the rules look at, shuffled, in each kind of file."""

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobs.domain.codescan import scan_paths

FRAGMENTS = [
    "torch.cuda.", 'asm volatile("', "mma.sync", "__shfl_xor_sync(", "0xffffffff",
    "wmma::fragment<", "#if __CUDA_ARCH__ >= 800", "#else", "#endif", "#ifdef USE_ROCM",
    "#define WARP_SIZE 32", '"cuda"', "'nccl'", "backend=", "init_process_group(",
    "import apex", "try:", "except ImportError:", "80 * 1024**3", "312e12", "48 * 1024", "108",
    "threadIdx.x % 32", "for (int o = 16; o > 0; o /= 2)", 'f"cuda:{', '}"', '"""', "#", "//",
    "/*", "*/", "(", ")", "<", ">", "{", "}", "[", "]", ",", "\n", " ", "\t", "=", "==", "'",
    '"', "\\", "Kernel_traits<", "ncclAllReduce(", "CUDAExtension(", "FROM nvidia/cuda:12",
    "export NCCL_DEBUG=1", "flash-attn==2", "atol=1e-2 # TF32 A100",
    "batch_size = 8  # 8x A100 80GB", "GPUS_PER_NODE=8", "TP=8", "é", "\u2028", "\x0c",
]  # fmt: skip
NAMES = [
    "a.py",
    "k.cu",
    "h.h",
    "setup.py",
    "requirements.txt",
    "Dockerfile",
    "run.sh",
    "CMakeLists.txt",
]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pieces=st.lists(st.sampled_from(FRAGMENTS), max_size=80))
def test_scanning_any_text_never_raises(tmp_path: Path, pieces: list[str]):
    text = "".join(pieces)
    for name in NAMES:
        (tmp_path / name).write_text(text, encoding="utf-8")
    report = scan_paths(tmp_path)
    assert report.files_scanned == len(NAMES)
    for finding in report.findings:
        assert finding.line >= 1 and finding.column >= 1
