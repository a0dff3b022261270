"""HTA's conventions on small hand-built traces, where the right answer can be worked by hand."""

import json
from pathlib import Path

import pytest

from jobs.domain.traces import analyze_traces
from jobs.domain.traces.intervals import merge, overlap_length, total_length
from jobs.domain.traces.kernels import KernelType, kernel_type, memcpy_kind
from jobs.domain.traces.sniff import Kind, sniff


def kernel(name, ts, dur, correlation, stream=7, **args):
    return {
        "ph": "X",
        "cat": "kernel",
        "name": name,
        "pid": 0,
        "tid": stream,
        "ts": ts,
        "dur": dur,
        "args": {"device": 0, "stream": stream, "correlation": correlation, **args},
    }


def launch(ts, correlation, name="cudaLaunchKernel"):
    return {
        "ph": "X",
        "cat": "cuda_runtime",
        "name": name,
        "pid": 100,
        "tid": 100,
        "ts": ts,
        "dur": 2,
        "args": {"correlation": correlation},
    }


def step(number, ts, dur):
    return {
        "ph": "X",
        "cat": "user_annotation",
        "name": f"ProfilerStep#{number}",
        "pid": 100,
        "tid": 100,
        "ts": ts,
        "dur": dur,
    }


def write_trace(tmp_path: Path, events: list[dict], name="rank0.json", **metadata) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"schemaVersion": 1, **metadata, "traceEvents": events}))
    return path


def analyze_one(path: Path, **options):
    summary = analyze_traces([path], **options)
    (rank,) = summary.ranks
    return rank


# --- kernel types and intervals --------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", "comm"),
        ("ncclDevKernel_Generic(ncclDevComm*, unsigned long, ncclWork*)", "comm"),
        ("Memcpy HtoD (Pageable -> Device)", "memory"),
        ("Memset (Device)", "memory"),
        ("dma_copy", "memory"),
        ("Stream Sync", "other"),  # HTA's OTHER: busy, but not compute
        ("Event Sync", "other"),
        ("void at::native::vectorized_elementwise_kernel<4>", "compute"),
        ("volta_sgemm_128x32_nt", "compute"),
        ("nccl_allreduce_helper", "compute"),  # no "Kernel": not communication
    ],
)
def test_kernel_type_follows_hta_name_rules(name, expected):
    names = {
        "comm": KernelType.COMMUNICATION,
        "memory": KernelType.MEMORY,
        "other": KernelType.OTHER,
        "compute": KernelType.COMPUTATION,
    }
    assert kernel_type(name) is names[expected]


def test_memcpy_kind_is_the_direction():
    assert memcpy_kind("Memcpy HtoD (Pageable -> Device)") == "HtoD"
    assert memcpy_kind("Memcpy DtoD (Device -> Device)") == "DtoD"
    assert memcpy_kind("Memset (Device)") is None


def test_merge_unions_overlapping_and_touching_intervals():
    merged = merge([(5, 7), (0, 2), (1, 3), (3, 4), (10, 12)])
    assert merged == [(0, 4), (5, 7), (10, 12)]
    assert total_length(merged) == 8
    assert overlap_length(merged, merge([(3, 6), (11, 20)])) == 1 + 1 + 1


# --- HTA's temporal breakdown and last-step filter ---------------------------------------------


def test_idle_compute_and_non_compute_by_hand(tmp_path):
    events = [
        kernel("gemm", 100, 10, 1),  # compute 100-110
        kernel("ncclKernel_AllReduce", 105, 20, 2, stream=20),  # comm 105-125
        kernel("Memcpy DtoH (Device -> Pinned)", 140, 10, 3, bytes=4096),  # memory 140-150
        *(launch(90 + i, i) for i in (1, 2, 3)),
    ]
    rank = analyze_one(write_trace(tmp_path, events))
    assert (rank.window_start_us, rank.window_end_us) == (100, 150)
    assert rank.kernel_time_us == 50
    assert rank.idle_us == 50 - 25 - 10  # union is 100-125 and 140-150
    assert rank.compute_us == 10
    assert rank.non_compute_us == 50 - 10 - 15
    assert (rank.idle_pct, rank.compute_pct, rank.non_compute_pct) == (30, 20, 50)
    assert rank.category_time_us == {
        "computation": 10,
        "communication": 20,
        "memory": 10,
        "other": 0,
    }
    assert rank.communication_overlap_pct == 100 * 5 / 20
    assert rank.memcpy_bytes_by_kind == {"DtoH": 4096}
    assert rank.profiler_steps == 0 and not rank.last_step_dropped


def test_the_last_profiler_step_is_dropped_by_launch_time(tmp_path):
    events = [
        step(1, 0, 100),
        step(2, 100, 100),
        step(3, 200, 100),
        launch(10, 1),
        kernel("a", 20, 10, 1),
        launch(150, 2),
        # Launched in step 2 but still running after step 3 began: kept, as in HTA.
        kernel("b", 190, 30, 2),
        launch(210, 3),
        kernel("c", 220, 10, 3),  # launched in the last step: dropped
        kernel("orphan", 50, 5, 99),  # no launch in the trace: HTA drops it too
    ]
    rank = analyze_one(write_trace(tmp_path, events))
    assert rank.profiler_steps == 3 and rank.last_step_dropped
    assert rank.gpu_event_count == 2
    assert (rank.window_start_us, rank.window_end_us) == (20, 220)
    assert {k.name for k in rank.top_kernels} == {"a", "b"}


def test_one_profiler_step_keeps_everything(tmp_path):
    events = [step(7, 0, 100), launch(10, 1), kernel("a", 20, 10, 1), kernel("z", 500, 1, 42)]
    rank = analyze_one(write_trace(tmp_path, events))
    assert not rank.last_step_dropped
    assert rank.gpu_event_count == 2


def test_ns_rounding_ceils_starts_and_floors_ends_only_when_asked(tmp_path):
    events = [kernel("a", 100.4, 10.2, 1), kernel("b", 120.9, 0.5, 2), launch(90.5, 1)]
    path = write_trace(tmp_path, events)
    exact = analyze_one(path)
    assert not exact.ns_rounding_used
    assert exact.kernel_time_us == pytest.approx(121.4 - 100.4)
    rounded = analyze_one(path, hta_ns_rounding=True)
    assert rounded.ns_rounding_used
    # a: 101..110; b: 121..121 (a 0.5 us kernel rounds away to nothing, as in HTA)
    assert (rounded.window_start_us, rounded.window_end_us) == (101, 121)
    assert rounded.compute_us == 9


def test_any_row_with_a_stream_counts_as_gpu_work_like_in_hta(tmp_path):
    triton_launcher = {
        "ph": "X",
        "cat": "cpu_op",
        "name": "triton_poi_fused_add_0",
        "ts": 100,
        "dur": 50,
        "args": {"stream": 0},
    }
    rocm_runtime = launch(90, 1, name="hipLaunchKernel")
    rocm_runtime["args"]["stream"] = "0x0"  # not a number: HTA reads it as -1, not a GPU row
    events = [triton_launcher, rocm_runtime, kernel("k", 110, 10, 1)]
    rank = analyze_one(write_trace(tmp_path, events))
    assert rank.gpu_event_count == 2
    assert rank.kernel_time_us == 50


def test_legacy_2021_categories_parse(tmp_path):
    legacy = kernel("volta_sgemm", 10, 5, 1)
    legacy["cat"] = "Kernel"
    copy = kernel("Memcpy HtoD (Pageable -> Device)", 20, 5, 2, bytes=100)
    copy["cat"] = "Memcpy"
    runtime = launch(5, 1, name="cudaLaunchKernel")
    runtime["cat"] = "Runtime"
    rank = analyze_one(write_trace(tmp_path, [legacy, copy, runtime]))
    assert rank.gpu_event_count == 2
    assert rank.memcpy_bytes_by_kind == {"HtoD": 100}


def test_launch_gaps_on_the_busiest_stream(tmp_path):
    events = [
        kernel("a", 0, 10, 1),
        kernel("b", 15, 10, 2),  # 5 us gap: normal launch latency, not counted
        kernel("c", 45, 10, 3),  # 20 us
        kernel("d", 95, 10, 4),  # 40 us
        kernel("e", 200, 1, 5, stream=9),  # a quieter stream
    ]
    rank = analyze_one(write_trace(tmp_path, events))
    assert rank.launch_gap_stream == 7
    assert rank.launch_gap_count == 2
    assert rank.launch_gap_total_us == 60
    assert rank.launch_gap_p50_us == 30


def test_memory_peaks_come_from_gpu_allocator_events(tmp_path):
    def memory(device_type, allocated, reserved):
        args = {"Device Type": device_type, "Total Allocated": allocated}
        if reserved is not None:
            args["Total Reserved"] = reserved
        return {"ph": "i", "name": "[memory]", "ts": 1, "s": "t", "args": args}

    events = [
        memory(1, 500, 1000),
        memory(1, 800, None),
        memory(1, 300, 1200),
        memory(0, 10**12, 0),  # host memory: not the GPU's
        kernel("a", 0, 10, 1),
    ]
    rank = analyze_one(write_trace(tmp_path, events))
    assert (rank.peak_allocated_bytes, rank.peak_reserved_bytes) == (800, 1200)


def test_rank_world_size_and_device_properties_come_from_the_metadata(tmp_path):
    devices = [
        {"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85 * 10**9},
        {"id": 1, "name": "NVIDIA A100-SXM4-40GB", "totalGlobalMem": 42 * 10**9},
    ]
    on_device_1 = kernel("a", 0, 10, 1)
    on_device_1["args"]["device"] = 1
    path = write_trace(
        tmp_path,
        [on_device_1],
        deviceProperties=devices,
        distributedInfo={"backend": "nccl", "rank": 3, "world_size": 4},
    )
    rank = analyze_one(path)
    assert (rank.rank, rank.world_size) == (3, 4)
    assert rank.gpu_name == "NVIDIA A100-SXM4-40GB"
    assert rank.device_properties == devices[1]


def test_ranks_are_sorted_and_duplicates_are_warned_about(tmp_path):
    paths = [
        write_trace(tmp_path, [kernel("a", 0, 10, 1)], f"r{rank}.json", distributedInfo=info)
        for rank, info in ((2, {"rank": 2}), (0, {"rank": 0}), (9, {}), (20, {"rank": 0}))
    ]
    summary = analyze_traces(paths)
    assert [(r.rank, r.file) for r in summary.ranks] == [
        (0, "r0.json"),
        (0, "r20.json"),
        (2, "r2.json"),
        (None, "r9.json"),
    ]
    assert any("rank 0 appears in 2 files" in warning for warning in summary.warnings)
    assert summary.files == ["r2.json", "r0.json", "r9.json", "r20.json"]


def test_a_utf8_bom_is_tolerated(tmp_path):
    path = tmp_path / "rank0.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"traceEvents": [kernel("a", 0, 1, 1)]}).encode())
    assert analyze_one(path).gpu_event_count == 1


# --- sniffing --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("head", "kind"),
    [
        (b"\x1f\x8b\x08\x00", Kind.GZIP),
        (b"PK\x03\x04", Kind.ZIP),
        (b"  \n {", Kind.JSON),
        (b"[{", Kind.JSON),
    ],
)
def test_sniff_recognises_what_we_read(head, kind):
    assert sniff(head) is kind


def test_ijson_uses_its_c_backend():
    # The pure-Python backends parse ~30x slower: a 500 MB trace would miss the job's time limit.
    import ijson

    assert ijson.backend == "yajl2_c"
