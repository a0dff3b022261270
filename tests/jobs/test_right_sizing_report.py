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
NSYS = TRACES / "pipit/pipit/tests/data/saxpy-mpi-cuda_nsys_perlmutter0.sqlite"
# The same export on its 4x A100 node (tests/fixtures/traces/pipit/make_4gpu_node.py).
NODE_4X = TRACES / "pipit" / "saxpy_perlmutter0_4gpu_node.sqlite"


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
            "used",
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


def test_the_nsys_export_counts_its_kernels_not_its_copies(catalog):
    (device,) = analyze(NSYS)["devices"]
    assert device["catalog_gpu"] == "A100-40GB-SXM"
    assert device["kernel_count"] == 5 and device["used"]  # 5 kernels, 15 memcpy rows


def test_a_4_gpu_node_with_kernels_on_one_gpu_is_called_out_and_priced_on_1_gpu(catalog):
    report = analyze(NODE_4X)
    assert [(d["index"], d["kernel_count"], d["used"]) for d in report["devices"]] == [
        (0, 5, True),
        (1, 0, False),
        (2, 0, False),
        (3, 0, False),
    ]
    assert {d["catalog_gpu"] for d in report["devices"]} == {"A100-40GB-SXM"}
    assert report["node"] == {
        "gpus_present": 4,
        "gpus_needed": 1,
        "gpus_idle": 3,
        "finding": "3 of 4 GPUs were idle for the whole window (GPUs 1, 2 and 3 ran no "
        "kernels): the job used 1",
    }
    assert report["recommendation"].startswith(
        report["node"]["finding"] + "; the A100 40GB SXM on a 1-GPU instance ("
    )
    # The report's "what to rent" line is the recommendation's action alone.
    assert report["recommendation"].endswith(": " + report["rent"])
    assert len(report["rent"]) < len(report["recommendation"]) / 2
    assert "GPUs were idle" not in report["rent"]
    (current,) = [c for c in report["candidates"] if c["is_current"]]
    assert current["gpu"] == "A100-40GB-SXM" and current["gpu_count"] == 4
    others = [c for c in report["candidates"] if not c["is_current"]]
    assert any(c["gpu"] == "A100-40GB-SXM" and c["gpu_count"] == 1 for c in others)
    assert {c["gpu_count"] for c in others} == {1}
    for candidate in others:
        if candidate["offer"]:
            # Priced whole: a 1-GPU instance, or the cheapest larger one with a note saying so.
            larger = candidate["offer"]["gpu_count"] > 1
            assert larger == any("instance is offered: priced on" in n for n in candidate["notes"])
            hourly = candidate["offer"]["usd_per_hour"]
            step_s = candidate["projected_step_time_s"]["expected"]
            assert candidate["usd_per_1000_steps"]["expected"] == pytest.approx(
                hourly * step_s * 1000 / 3600
            )


def test_the_fp64_saxpy_report_does_not_assume_bf16(catalog):
    report = analyze(NSYS)
    assert report["observed"]["workload"] == "non-ml"
    assert report["observed"]["precision"] == "unknown"
    notes = [note for c in report["candidates"] for note in c["notes"]]
    assert notes and not any("assumes bf16" in note for note in notes)
    assert any(note.startswith("precision unknown") for note in notes)


def test_no_candidate_that_the_measured_peak_does_not_fit_is_recommended(catalog):
    report = analyze(SMI)
    peak = max(d["peak_memory_used_bytes"] for d in report["devices"])
    from catalog.models import Gpu

    for candidate in report["candidates"]:
        if candidate["fits"] and not candidate["is_current"]:
            memory = float(Gpu.objects.get(canonical_key=candidate["gpu"]).memory_gib) * 2**30
            assert memory * 0.99 >= peak


def _job_page(client, team, path: Path) -> str:
    """The page of a trace job of one uploaded file, analysed by the task the workers run."""
    job = job_submit(team=team.team, user=team.member, kind="trace", uploads=[upload(path)])
    analyze_job.apply(args=[job.pk])
    assert Job.objects.get(pk=job.pk).status == JobStatus.DONE
    client.force_login(team.member)
    return client.get(job.get_absolute_url()).content.decode()


def test_the_job_page_shows_the_recommendation_and_the_charts(client, team, media_root, catalog):
    page = _job_page(client, team, SMI)
    assert 'id="recommendation"' in page and 'id="candidates"' in page
    assert "GPU utilisation over time" in page and "capacity" in page


def test_the_job_page_calls_out_the_idle_gpus_of_the_node(client, team, media_root, catalog):
    page = _job_page(client, team, NODE_4X)
    assert 'id="devices"' in page
    assert "3 of 4 GPUs were idle for the whole window" in page
    assert page.count('<span class="badge">idle</span>') == 3
    assert "GPUs per instance" in page


def test_analyze_trace_prints_the_recommendation_with_the_idle_gpu_finding(catalog):
    out = StringIO()
    call_command("analyze_trace", str(NODE_4X), stdout=out)
    (line,) = [line for line in out.getvalue().splitlines() if line.startswith("Recommendation")]
    assert line.startswith("Recommendation: 3 of 4 GPUs were idle for the whole window")
