"""Precision in right-sizing: read from kernel names when they reveal it; never assumed bf16 for
code that is not an ML workload, which is projected by bandwidth and the FP32/FP64 peaks.

The FP64 saxpy is a real Nsight Systems export (tests/fixtures/traces/README.md); the devices
are made up (tests/advisor/devices.py) so that each ratio is plain to see."""

from pathlib import Path

import pytest

from advisor.domain.devices import Device
from advisor.domain.rightsizing import ObservedJob, Projection, observe, project
from jobs.domain.traces import analyze_traces
from tests.advisor.devices import made_up_device

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
SAXPY = TRACES / "pipit/pipit/tests/data/saxpy-mpi-cuda_nsys_perlmutter0.sqlite"
ML_TRACE = (
    TRACES / "hta/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
)
FIGURES = {"fp32_tflops": 20.0, "fp64_tflops": 10.0, "bf16_tflops": 300.0, "supports_bf16": True}
HERE = made_up_device("here", bandwidth_gb_s=1000, **FIGURES)


def _there(**figures) -> Device:
    return made_up_device("there", **{"bandwidth_gb_s": 1000, **FIGURES, **figures})


def _non_ml(precision: str = "unknown", *, fp64: bool) -> ObservedJob:
    return ObservedJob(
        step_s=2.0,
        compute_s=1.0,
        memory_s=0.0,
        communication_s=0.0,
        host_idle_s=1.0,
        precision=precision,
        peak_memory_bytes=2**30,
        workload="non-ml",
        fp64=fp64,
    )


def _projected(job: ObservedJob, there: Device) -> Projection:
    return next(p for p in project(job, HERE, [there], {}) if not p.is_current)


def test_the_fp64_saxpy_is_not_ml_and_its_precision_is_unknown():
    # saxpy(double *, double *, double *, double, int): no GEMM, FP64 in the name.
    job = observe(analyze_traces([SAXPY]).ranks)
    assert job.workload == "non-ml" and job.precision == "unknown" and job.fp64
    # Its kernels are compute (not assumed bandwidth-bound); its copies are memory.
    assert job.compute_s > 0 and job.memory_s > 0


def test_an_ml_trace_keeps_the_precision_its_kernels_reveal():
    job = observe(analyze_traces([ML_TRACE]).ranks)
    assert job.workload == "ml" and job.precision == "fp32" and not job.fp64


def test_fp64_code_is_projected_by_the_fp64_peak_when_it_is_the_slower_ratio():
    # Twice the FP32 and bf16, the same bandwidth, half the FP64: the FP64 ratio decides.
    there = _projected(
        _non_ml(fp64=True), _there(fp32_tflops=40.0, bf16_tflops=600.0, fp64_tflops=5.0)
    )
    assert there.step_s.expected == pytest.approx(1.0 + 1.0 * 10.0 / 5.0)
    assert not any("assumes bf16" in note for note in there.notes)
    assert there.notes[0].startswith("precision unknown: kernel names do not reveal it")
    assert "FP64 peak (their names say double precision)" in there.notes[0]


def test_non_ml_code_is_projected_by_bandwidth_when_it_is_the_slower_ratio():
    # Ten times the FP64 but the same bandwidth: no faster than the memory allows.
    there = _projected(_non_ml(fp64=True), _there(fp64_tflops=100.0))
    assert there.step_s.expected == pytest.approx(2.0)


def test_non_ml_code_without_fp64_names_is_projected_by_the_fp32_peak():
    there = _projected(_non_ml(fp64=False), _there(fp32_tflops=10.0, fp64_tflops=100.0))
    assert there.step_s.expected == pytest.approx(1.0 + 1.0 * 20.0 / 10.0)
    assert "FP32 peak" in there.notes[0]


def test_fp64_code_on_a_gpu_without_a_catalogued_fp64_figure_is_not_guessed():
    there = _projected(_non_ml(fp64=True), _there(fp64_tflops=None))
    assert there.step_s is None
    assert there.notes[-1] == "the catalogue has no fp64 TFLOPS for there"


def test_fp64_matrix_math_named_by_its_kernels_is_projected_at_fp64():
    there = _projected(_non_ml("fp64", fp64=True), _there(fp64_tflops=20.0, bandwidth_gb_s=4000))
    assert there.step_s.expected == pytest.approx(1.0 + 1.0 * 10.0 / 20.0)
    assert there.notes[0] == (
        "FP64 matrix math (not an ML workload): computation kernels scale by the slower of "
        "memory bandwidth and the FP64 peak"
    )


def test_an_ml_job_whose_kernels_hide_the_precision_still_assumes_bf16():
    job = ObservedJob(
        step_s=1.0,
        compute_s=1.0,
        memory_s=0.0,
        communication_s=0.0,
        host_idle_s=0.0,
        precision="unknown",
        peak_memory_bytes=2**30,
    )
    there = _projected(job, _there(bf16_tflops=600.0))
    assert there.step_s.expected == pytest.approx(0.5)
    assert there.notes == ["kernel names do not reveal the precision: assumes bf16"]
