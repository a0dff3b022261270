"""Right-sizing in the job report and `analyze_trace --json`: devices, verdict, candidates."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from jobs.models import Job, JobStatus
from jobs.services import job_submit
from jobs.tasks import analyze_job
from tests.helpers import DLRM, TRACES, upload

SMI = TRACES / "nvidia-smi" / "query_gpu_units_2gpus.csv"
NSYS = next((TRACES / "pipit").rglob("*.sqlite"))


def analyze(*paths: Path) -> dict:
    out = StringIO()
    call_command("analyze_trace", *map(str, paths), "--json", stdout=out)
    return json.loads(out.getvalue())


@pytest.mark.parametrize("paths", [[SMI], [NSYS], DLRM], ids=["nvidia-smi", "nsys", "kineto"])
def test_analyze_trace_json_has_devices_verdict_and_candidates(catalog, paths):
    report = analyze(*paths)
    for device in report["devices"]:
        assert {
            "name",
            "catalog_gpu",
            "capacity_bytes",
            "peak_memory_used_bytes",
            "kernel_count",
        } <= set(device)
    assert {"kind", "confidence", "evidence"} <= set(report["verdict"])
    assert report["verdict"]["kind"] in {
        "memory-bound",
        "compute-bound",
        "communication-bound",
        "host/launch-bound",
        "mostly idle",
    }
    current = [c for c in report["candidates"] if c["is_current"]]
    assert len(current) == 1
    for candidate in report["candidates"]:
        assert {"gpu", "fits", "projected_step_time_s", "usd_per_1000_steps", "is_current"} <= set(
            candidate
        )
        if candidate["fits"] and candidate["projected_step_time_s"]:
            step = candidate["projected_step_time_s"]
            assert step["low"] <= step["expected"] <= step["high"]


def test_an_nvidia_smi_log_names_its_gpu_and_peak_memory(catalog):
    report = analyze(SMI)
    gpu = report["devices"][0]
    assert gpu["catalog_gpu"] and gpu["peak_memory_used_bytes"] > 0
    assert gpu["kernel_count"] is None  # nvidia-smi sees no kernels
    assert report["recommendation"]


def test_the_nsys_export_counts_its_kernels(catalog):
    device = analyze(NSYS)["devices"][0]
    assert device["catalog_gpu"] == "A100-40GB-SXM" and device["kernel_count"] >= 5


def test_no_candidate_that_the_measured_peak_does_not_fit_is_recommended(catalog):
    report = analyze(SMI)
    peak = max(d["peak_memory_used_bytes"] for d in report["devices"])
    from catalog.models import Gpu

    for candidate in report["candidates"]:
        if candidate["fits"] and not candidate["is_current"]:
            memory = float(Gpu.objects.get(canonical_key=candidate["gpu"]).memory_gib) * 2**30
            assert memory * 0.99 >= peak


def test_the_job_page_shows_the_recommendation_and_the_charts(client, team, media_root, catalog):
    job = job_submit(team=team.team, user=team.member, kind="trace", uploads=[upload(SMI)])
    analyze_job.apply(args=[job.pk])
    assert Job.objects.get(pk=job.pk).status == JobStatus.DONE
    client.force_login(team.member)
    page = client.get(job.get_absolute_url()).content.decode()
    assert 'id="recommendation"' in page and 'id="candidates"' in page
    assert "GPU utilisation over time" in page and "capacity" in page
