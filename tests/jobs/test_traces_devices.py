"""What each format says of the machine's GPUs (`gpus_present`), kernel counts that count only
kernels, and precision read from kernel names (FP64 included).

The 4-GPU export is made from the real Perlmutter one by `tests/fixtures/traces/pipit/
make_4gpu_node.py` (provenance in its docstring); the other files are the real samples of
tests/fixtures/traces/README.md."""

import json
import sqlite3
from pathlib import Path

import pytest

from jobs.domain.traces import analyze_traces
from jobs.domain.traces.kernels import math_precision, names_fp64
from jobs.domain.traces.metrics import MAX_GPUS_PRESENT
from tests.fixtures.traces.pipit.make_4gpu_node import make

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
NSYS_1X = TRACES / "pipit/pipit/tests/data/saxpy-mpi-cuda_nsys_perlmutter0.sqlite"
NODE_4X = TRACES / "pipit" / "saxpy_perlmutter0_4gpu_node.sqlite"
MI250 = TRACES / "hta/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz"
SMI_3X = TRACES / "nvidia-smi/query_gpu_nounits_3gpus_reordered.csv"
A100_40GB_BYTES = 42_297_524_224  # TARGET_INFO_GPU.totalMemory of the real export


def _rows(path: Path, query: str) -> list[tuple]:
    with sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True) as db:
        return db.execute(query).fetchall()


def test_the_kernel_count_counts_kernels_not_copies():
    (rank,) = analyze_traces([NSYS_1X]).ranks
    assert rank.gpu_event_count == 20  # 5 kernels and 15 memcpy rows
    (kernels,) = _rows(NSYS_1X, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")[0]
    assert rank.kernel_count == kernels == 5


def test_the_4_gpu_export_lists_every_gpu_of_the_node_and_the_one_that_ran():
    (rank,) = analyze_traces([NODE_4X]).ranks  # only device 0 ran anything
    assert rank.rank == 0 and rank.kernel_count == 5
    assert rank.gpus_present == [
        {
            "id": device,
            "name": "NVIDIA A100-SXM4-40GB",
            "total_memory_bytes": A100_40GB_BYTES,
            "kernel_count": 5 if device == 0 else 0,
        }
        for device in range(4)
    ]


def test_the_4_gpu_export_is_the_real_one_with_three_gpu_rows_added(tmp_path):
    made = make(made=tmp_path / "node.sqlite")
    gpus = "SELECT id, name, busLocation, uuid, totalMemory FROM TARGET_INFO_GPU ORDER BY id"
    assert _rows(made, gpus) == _rows(NODE_4X, gpus)
    real_gpu = _rows(NSYS_1X, gpus)
    assert _rows(made, gpus)[0] == real_gpu[0]
    assert [row[0] for row in _rows(made, gpus)] == [0, 1, 2, 3]
    for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "StringIds"):
        query = f"SELECT * FROM {table} ORDER BY rowid"
        assert _rows(made, query) == _rows(NSYS_1X, query)


def test_kineto_device_properties_list_the_gpus_the_rank_did_not_use():
    (rank,) = analyze_traces([MI250]).ranks  # four MI250 GCDs listed, work on device 2
    assert [(gpu["id"], gpu["kernel_count"]) for gpu in rank.gpus_present] == [
        (0, 0),
        (1, 0),
        (2, rank.kernel_count),
        (3, 0),
    ]
    assert rank.kernel_count == 14  # 14 kernels; its 2 memcpy rows are not kernels
    assert {gpu["name"] for gpu in rank.gpus_present} == {"AMD Radeon Graphics"}


def test_nvidia_smi_lists_each_index_it_logged_without_a_kernel_count():
    ranks = analyze_traces([SMI_3X]).ranks
    assert [rank.gpus_present for rank in ranks] == [
        [
            {
                "id": rank.rank,
                "name": "NVIDIA L4",
                "total_memory_bytes": rank.device_properties["totalGlobalMem"],
                "kernel_count": None,
            }
        ]
        for rank in ranks
    ]
    assert [rank.rank for rank in ranks] == [0, 1, 2]


@pytest.mark.parametrize(
    ("name", "precision"),
    [
        ("volta_dgemm_64x64_nn", "fp64"),  # cuBLAS FP64 GEMM on Volta
        ("sm80_xmma_gemm_f64f64_f64f64_f64_nn_n_tilesize32x32x16_stage3", "fp64"),
        ("volta_sgemm_128x64_nn", "fp32"),
        ("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_nn", "bf16"),
        ("sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize96x64x32", "fp16"),
        ("gemm_double_buffered_kernel", "unknown"),  # "double" as a word only
    ],
)
def test_matrix_math_precision_is_read_from_the_kernel_name(name, precision):
    assert math_precision(name) == precision


def test_fp64_is_read_from_any_kernel_name():
    assert names_fp64("saxpy(double *, double *, double *, double, int)")
    assert names_fp64("void axpy_kernel_val<double, double, 0>(cublasAxpyParamsVal<double>)")
    assert not names_fp64("void at::native::vectorized_elementwise_kernel<4, float>")
    assert not names_fp64("gemm_double_buffered_kernel")


def test_the_saxpy_export_spends_its_kernel_time_in_fp64():
    (rank,) = analyze_traces([NSYS_1X]).ranks
    (kernel_ns,) = _rows(NSYS_1X, "SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL")[0]
    assert rank.fp64_time_us == pytest.approx(kernel_ns / 1000)
    assert rank.math_time_by_precision_us == {}  # no GEMM, convolution or attention


def test_a_file_listing_thousands_of_gpus_is_cut_to_the_limit_with_a_warning(tmp_path):
    listed = [{"id": device, "name": "NVIDIA H100"} for device in range(5000)]
    kernel = {
        "ph": "X",
        "cat": "kernel",
        "name": "k",
        "pid": 4321,
        "tid": 7,
        "ts": 0,
        "dur": 10,
        "args": {"device": 4321, "stream": 7, "correlation": 1},
    }
    path = tmp_path / "many.json"
    path.write_text(json.dumps({"deviceProperties": listed, "traceEvents": [kernel]}))
    summary = analyze_traces([path])
    (rank,) = summary.ranks
    assert len(rank.gpus_present) == MAX_GPUS_PRESENT
    assert 4321 in [gpu["id"] for gpu in rank.gpus_present]  # the GPU that ran is kept
    assert f"many.json: lists 5000 GPUs; only {MAX_GPUS_PRESENT} are reported" in summary.warnings
