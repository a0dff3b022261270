"""advisor.services.rightsizing_report: the trace job's report, written from the jobs app's
ranks (read as MeasuredRank) and the catalogue.

Reports carry what their pages show: each candidate stores its catalogue GPU and capacity, so
the job page never looks them up again in a catalogue that may have changed since."""

from dataclasses import asdict
from pathlib import Path

from advisor.services import rightsizing_report
from catalog.models import Gpu
from jobs.domain.traces import analyze_traces
from tests.helpers import DLRM

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
SMI = TRACES / "nvidia-smi" / "query_gpu_units_2gpus.csv"


def _report() -> dict:
    summary = analyze_traces([SMI])
    return rightsizing_report(summary=asdict(summary), ranks=summary.ranks)


def test_each_candidate_stores_the_capacity_of_its_catalogue_gpu(catalog):
    report = _report()
    memory_gib = dict(Gpu.objects.values_list("canonical_key", "memory_gib"))
    assert len(report["candidates"]) + len(report["moves"]) == len(memory_gib)
    for candidate in report["candidates"] + report["moves"]:
        assert candidate["capacity_bytes"] == int(memory_gib[candidate["gpu"]] * 2**30)
        assert candidate["gpu_name"] == Gpu.objects.get(canonical_key=candidate["gpu"]).name


def test_each_rank_gets_its_catalogue_gpu_capacity_and_peak_share(catalog):
    report = _report()
    assert len(report["ranks"]) == len(report["devices"]) == 2
    for rank, device in zip(report["ranks"], report["devices"], strict=True):
        assert rank["catalog_gpu"] == device["catalog_gpu"] == report["gpu"]["catalog_gpu"]
        assert rank["capacity_bytes"] == device["capacity_bytes"] > 0
        peak = device["peak_memory_used_bytes"]
        assert rank["peak_memory_pct_of_capacity"] == round(100 * peak / rank["capacity_bytes"], 1)


def test_the_summary_given_is_not_modified(catalog):
    summary = analyze_traces([SMI])
    data = asdict(summary)
    rightsizing_report(summary=data, ranks=summary.ranks)
    assert data == asdict(summary)


def _kineto_report() -> dict:
    summary = analyze_traces([DLRM[0]])
    return rightsizing_report(summary=asdict(summary), ranks=summary.ranks)


def test_a_cuda_pytorch_trace_gets_no_other_vendor_as_a_like_for_like_swap(catalog):
    """Before: AWS Inferentia2 and Trainium were ranked as replacements for a PyTorch CUDA
    training trace."""
    report = _kineto_report()
    assert report["framework"] == "pytorch" and report["platform"].startswith("nvidia-")
    vendors = dict(Gpu.objects.values_list("canonical_key", "vendor"))
    assert {vendors[c["gpu"]] for c in report["candidates"]} == {"NVIDIA"}
    moved = {c["gpu"]: c for c in report["moves"]}
    assert {vendors[key] for key in moved} == {"AMD", "Intel", "Google", "AWS"}
    assert moved["Inferentia2"]["move"] == "rewrite"
    assert moved["MI300X"]["move"] == "re-tune" and "PyTorch runs on" in moved["MI300X"]["move_why"]
    assert "Inferentia" not in report["recommendation"]


def test_an_nvidia_smi_log_says_nothing_of_the_code_so_every_move_is_a_rewrite(catalog):
    report = _report()
    assert report["framework"] == "unknown"
    assert {c["move"] for c in report["moves"]} == {"rewrite"}
