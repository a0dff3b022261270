"""advisor.services.rightsizing_report: the trace job's report, written from the jobs app's
ranks (read as MeasuredRank) and the catalogue.

Reports carry what their pages show: each candidate stores its catalogue GPU and capacity, so
the job page never looks them up again in a catalogue that may have changed since."""

from dataclasses import asdict
from pathlib import Path

from advisor.services import rightsizing_report
from catalog.models import Gpu
from jobs.domain.traces import analyze_traces

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
SMI = TRACES / "nvidia-smi" / "query_gpu_units_2gpus.csv"


def _report() -> dict:
    summary = analyze_traces([SMI])
    return rightsizing_report(summary=asdict(summary), ranks=summary.ranks)


def test_each_candidate_stores_the_capacity_of_its_catalogue_gpu(catalog):
    report = _report()
    memory_gib = dict(Gpu.objects.values_list("canonical_key", "memory_gib"))
    assert len(report["candidates"]) == len(memory_gib)
    for candidate in report["candidates"]:
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
