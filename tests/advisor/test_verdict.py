"""The verdict: what bounds a job, how sure we are, and the evidence, on real samples and on
hand-built summaries that sit on either side of each threshold."""

from dataclasses import replace
from pathlib import Path

import pytest

from advisor.domain.rightsizing import Verdict, project, recommendation, verdict
from advisor.domain.rightsizing.observed import ObservedJob
from jobs.domain.traces import RankSummary, analyze_traces
from tests.advisor.devices import GPUS, OFFERS

ROOT = Path(__file__).resolve().parents[2]
TRACES = ROOT / "tests/fixtures/traces"
HTA = TRACES / "hta/tests/data"
DLRM = TRACES / "param/et_replay/tests/inputs/dlrm_kineto_8rank"


def _judge(path: Path, **options) -> Verdict:
    return verdict(analyze_traces([path]).ranks, **options)


def _evidence(judged: Verdict) -> dict:
    return {item.name: item for item in judged.evidence}


# --- real samples ------------------------------------------------------------------------------


def test_a_benchmark_that_mostly_waits_on_the_host_is_mostly_idle():
    judged = _judge(HTA / "critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz")
    assert (judged.kind, judged.confidence) == ("mostly idle", "high")
    evidence = _evidence(judged)
    assert evidence["idle share"].value > 99
    assert evidence["mean launch gap"].value > 1000  # a few multi-second stalls


def test_a_cnn_training_step_on_a_v100_is_compute_bound():
    judged = _judge(
        HTA / "ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
        device_bandwidth_gb_s=GPUS["V100-32GB"].bandwidth_gb_s,
    )
    assert judged.kind == "compute-bound"
    assert judged.confidence == "medium"  # matrix math 63 % of busy time: 13 points clear
    copy = _evidence(judged)["DtoD copy bandwidth"]
    assert copy.unit == "GB/s"
    assert copy.note.startswith(f"{100 * copy.value / 900:.0f} % of the 900 GB/s device bandwidth")


def test_a_pointwise_triton_kernel_is_memory_bound():
    judged = _judge(HTA / "triton_example/triton_example.json.gz")
    assert judged.kind == "memory-bound"
    assert judged.confidence == "medium"  # one kernel: thin evidence lowers it from high


def test_a_dlrm_rank_waiting_in_sendrecv_is_communication_bound():
    judged = _judge(DLRM / "worker1_step_12.1694128201556.pt.trace.json.gz")
    assert (judged.kind, judged.confidence) == ("communication-bound", "high")
    assert _evidence(judged)["exposed communication"].value > 50


def test_small_kernels_launched_from_python_are_host_launch_bound():
    judged = _judge(TRACES / "param/et_replay/tests/inputs/linear_kineto.json.gz")
    assert judged.kind == "host/launch-bound"
    assert judged.rule == "idle 63 %, short launch gaps"


def test_the_nsys_sample_is_judged_like_a_trace():
    sample = TRACES / "pipit/pipit/tests/data/saxpy-mpi-cuda_nsys_perlmutter0.sqlite"
    judged = _judge(sample, device_bandwidth_gb_s=GPUS["A100-40GB-SXM"].bandwidth_gb_s)
    assert judged.kind == "mostly idle"
    assert {"HtoD copy bandwidth", "DtoH copy bandwidth"} <= set(_evidence(judged))


def test_an_nvidia_smi_log_is_never_judged_with_high_confidence():
    judged = _judge(TRACES / "nvidia-smi/query_gpu_quoted_header_restarted.csv")
    # 87 % idle is 37 points past 50 %: high, one level lower for only 10 samples.
    assert (judged.kind, judged.confidence) == ("mostly idle", "medium")
    evidence = _evidence(judged)
    assert evidence["mean utilisation"].value == pytest.approx(255 / 19)
    assert evidence["peak memory used"].value == 2000 * 2**20


# --- the rules, on hand-built summaries --------------------------------------------------------


def _rank(**fields) -> RankSummary:
    """A kernel-level rank with a 100 ms window and 1,000 events; fields override."""
    base = {
        "rank": 0,
        "world_size": None,
        "file": "rank0.json",
        "gpu_name": "NVIDIA H100 80GB HBM3",
        "device_properties": {},
        "window_start_us": 0.0,
        "window_end_us": 100_000.0,
        "kernel_time_us": 100_000.0,
        "idle_us": 0.0,
        "compute_us": 100_000.0,
        "non_compute_us": 0.0,
        "idle_pct": 0.0,
        "compute_pct": 100.0,
        "non_compute_pct": 0.0,
        "category_time_us": {},
        "top_kernels": [],
        "memcpy_bytes_by_kind": {},
        "communication_overlap_pct": None,
        "launch_gap_stream": 7,
        "launch_gap_count": 0,
        "launch_gap_total_us": 0.0,
        "launch_gap_p50_us": None,
        "peak_allocated_bytes": None,
        "peak_reserved_bytes": None,
        "profiler_steps": 0,
        "gpu_event_count": 1000,
        "cpu_only": False,
        "ns_rounding_used": False,
    }
    base.update(fields)
    return RankSummary(**base)


def _split(idle_pct=0.0, math_pct=0.0, memory_kernels_pct=0.0, communication_pct=0.0, **fields):
    """Percentages of the 100 ms window; gaps given as (count, total_us)."""
    compute_us = 1000 * (math_pct + memory_kernels_pct)
    return _rank(
        idle_us=1000 * idle_pct,
        idle_pct=idle_pct,
        compute_us=compute_us,
        math_us=1000 * math_pct,
        non_compute_us=1000 * communication_pct,
        category_time_us={"communication": 1000 * communication_pct},
        **fields,
    )


@pytest.mark.parametrize(
    ("rank", "kind", "confidence"),
    [
        # 80 % idle in 40 stalls of 2 ms: long gaps.
        (
            _split(80, 20, launch_gap_count=40, launch_gap_total_us=80_000),
            "mostly idle",
            "high",
        ),
        # Same idle share in 2,000 gaps of 40 us: launches, not stalls.
        (
            _split(80, 20, launch_gap_count=2000, launch_gap_total_us=80_000),
            "host/launch-bound",
            "high",
        ),
        (_split(28, 72), "host/launch-bound", "low"),  # 3 points past 25 %
        (_split(10, 30, 0, 60), "communication-bound", "high"),
        # Idle 30 % and exposed communication 40 %: the larger share decides.
        (_split(30, 30, 0, 40), "communication-bound", "medium"),
        (_split(5, 80, 15), "compute-bound", "high"),
        (_split(5, 20, 75), "memory-bound", "high"),
        (_split(5, 45, 50), "memory-bound", "low"),  # 47 % math: 3 points from the line
    ],
    ids=[
        "long-stalls",
        "short-gaps",
        "barely-idle",
        "collectives",
        "larger-share",
        "gemms",
        "elementwise",
        "close-call",
    ],
)
def test_rules_and_margins(rank, kind, confidence):
    judged = verdict([rank])
    assert (judged.kind, judged.confidence) == (kind, confidence)


def test_nvidia_smi_alone_stays_at_medium_however_clear():
    log = _rank(
        source="nvidia-smi",
        samples=3600,
        idle_us=95_000.0,
        idle_pct=95.0,
        utilization_mean_pct=5.0,
        gpu_event_count=0,
    )
    assert (verdict([log]).kind, verdict([log]).confidence) == ("mostly idle", "medium")
    busy = _rank(source="nvidia-smi", samples=3600, utilization_mean_pct=97.0)
    memory = replace(busy, memory_utilization_mean_pct=80.0)
    assert verdict([busy]).kind == "compute-bound"  # it cannot tell, so it says so plainly
    assert verdict([busy]).confidence == "low"
    assert verdict([memory]).kind == "memory-bound"


def test_thin_evidence_lowers_confidence():
    assert verdict([_split(5, 80, 15)]).confidence == "high"
    assert verdict([_split(5, 80, 15, gpu_event_count=20)]).confidence == "medium"
    short = _split(5, 80, 15, kernel_time_us=5_000.0)  # a 5 ms micro-benchmark
    assert verdict([short]).confidence == "medium"


def test_ranks_are_averaged_and_cpu_only_ranks_ignored():
    judged = verdict([_split(60, 40), _split(0, 100), _rank(cpu_only=True, kernel_time_us=0.0)])
    assert judged.kind == "host/launch-bound"  # 30 % idle on average
    assert _evidence(judged)["idle share"].value == pytest.approx(30)


def test_no_gpu_work_is_a_value_error():
    with pytest.raises(ValueError, match="no rank with GPU work"):
        verdict([_rank(cpu_only=True, kernel_time_us=0.0)])


def test_the_verdict_names_the_bound_when_the_recommendation_is_to_stay():
    job = ObservedJob(
        step_s=1.0,
        compute_s=0.85,
        memory_s=0.10,
        communication_s=0.0,
        host_idle_s=0.05,
        precision="bf16",
        peak_memory_bytes=30 * 2**30,
    )
    h100 = GPUS["H100-SXM"]
    projections = project(job, h100, [GPUS["A100-40GB-SXM"], GPUS["L4"]], OFFERS)
    sentence = recommendation(job, projections, verdict=Verdict("compute-bound", "high"))
    assert sentence == (
        "keep the H100 SXM: compute-bound at 95% busy, nothing cheaper is faster per dollar"
    )
