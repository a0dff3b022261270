"""Claim, finish and reap without a worker: the state machine that keeps jobs exactly-once."""

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from catalog.domain.device_names import match_device_name
from catalog.selectors import gpu_memory_gib_by_key
from jobs.lifecycle import JobNotClaimable, JobOutOfAttempts, job_claim, job_finish
from jobs.models import Job, JobStatus
from jobs.services import job_submit
from jobs.tasks import analyze_job, jobs_reap
from tests.helpers import DLRM, LARGEST_TRACE, SMALL_TRACE, needs_real_services, upload


@pytest.fixture
def job(team, media_root):
    return job_submit(team=team.team, user=team.member, kind="trace", uploads=[upload(DLRM[0])])


def test_the_task_analyses_the_job_in_process_and_writes_the_report(job, catalog):
    assert analyze_job.apply(args=[job.pk]).get() == "done"
    job.refresh_from_db()
    assert job.status == JobStatus.DONE and job.progress_pct == 100
    rank = job.report["ranks"][0]
    assert rank["rank"] == 0 and rank["catalog_gpu"] == "V100-32GB"
    assert rank["file"] == DLRM[0].name  # the uploaded name


def test_a_duplicate_delivery_of_a_finished_job_is_a_no_op(job, catalog):
    analyze_job.apply(args=[job.pk])
    finished_at = Job.objects.get(pk=job.pk).finished_at
    assert analyze_job.apply(args=[job.pk]).get() == "nothing to do: finished or deleted"
    assert Job.objects.get(pk=job.pk).finished_at == finished_at


def test_a_job_held_by_a_live_worker_cannot_be_claimed_twice(job):
    job_claim(job_id=job.pk)
    with pytest.raises(JobNotClaimable):
        job_claim(job_id=job.pk)


def test_a_stale_claim_cannot_finish_the_job_after_it_was_taken_over(job, settings):
    first = job_claim(job_id=job.pk)
    Job.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    second = job_claim(job_id=job.pk)
    assert not job_finish(job_id=job.pk, token=first, report={"from": "zombie"})
    assert job_finish(job_id=job.pk, token=second, report={"from": "live"})
    assert Job.objects.get(pk=job.pk).report == {"from": "live"}


def test_a_job_whose_workers_died_on_every_attempt_is_failed_not_retried(job, settings):
    for _ in range(settings.JOB_MAX_ATTEMPTS):
        job_claim(job_id=job.pk)
        Job.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    with pytest.raises(JobOutOfAttempts):
        job_claim(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and "stopped 2 times" in job.error


def test_the_reaper_resends_silent_running_jobs(job, settings, django_capture_on_commit_callbacks):
    job_claim(job_id=job.pk)
    Job.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    with django_capture_on_commit_callbacks() as callbacks:
        assert jobs_reap() == {"requeued": 1, "dispatched": 0, "resent": 0}
    assert len(callbacks) == 1


@needs_real_services
def test_a_job_is_committed_queued_and_marked_dispatched_once_the_broker_took_it(
    team, media_root, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        job = job_submit(team=team.team, user=team.member, kind="trace", uploads=[upload(DLRM[0])])
        assert (job.status, job.dispatched_at) == (JobStatus.QUEUED, None)
    job.refresh_from_db()
    assert job.status == JobStatus.QUEUED and job.dispatched_at is not None


def test_the_reaper_sends_a_never_dispatched_job_after_the_grace_not_the_visibility_timeout(
    job, settings, django_capture_on_commit_callbacks
):
    """Before: a job whose message the broker never took waited for the visibility timeout
    (900 s by default) like a lost one."""
    settings.JOB_DISPATCH_GRACE_S = 30
    assert job.dispatched_at is None  # its after-commit dispatch never ran: "the broker was down"
    Job.objects.filter(pk=job.pk).update(created_at=timezone.now() - timedelta(seconds=10))
    assert jobs_reap() == {"requeued": 0, "dispatched": 0, "resent": 0}
    Job.objects.filter(pk=job.pk).update(created_at=timezone.now() - timedelta(seconds=31))
    with django_capture_on_commit_callbacks() as callbacks:
        assert jobs_reap() == {"requeued": 0, "dispatched": 1, "resent": 0}
    assert len(callbacks) == 1


def test_a_dispatched_job_is_sent_again_only_after_the_visibility_timeout(job, settings):
    visibility_s = settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]
    long_ago = timezone.now() - timedelta(seconds=visibility_s * 2)
    Job.objects.filter(pk=job.pk).update(
        created_at=long_ago, dispatched_at=timezone.now() - timedelta(seconds=60)
    )
    assert jobs_reap() == {"requeued": 0, "dispatched": 0, "resent": 0}
    Job.objects.filter(pk=job.pk).update(
        dispatched_at=timezone.now() - timedelta(seconds=visibility_s + 1)
    )
    assert jobs_reap() == {"requeued": 0, "dispatched": 0, "resent": 1}


def test_a_malformed_upload_fails_in_process_with_the_analysers_message(team, media_root):
    from django.core.files.uploadedfile import SimpleUploadedFile

    job = job_submit(
        team=team.team,
        user=team.member,
        kind="trace",
        uploads=[SimpleUploadedFile("notes.json", b'{"hello": 1}')],
    )
    assert analyze_job.apply(args=[job.pk]).get() == "failed"
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and job.error.startswith("notes.json: ")


def test_analyze_trace_json_has_the_fields_scripts_use(catalog):
    out = StringIO()
    call_command("analyze_trace", *map(str, DLRM), "--json", stdout=out)
    report = json.loads(out.getvalue())
    assert [rank["rank"] for rank in report["ranks"]] == list(range(8))
    for rank in report["ranks"]:
        assert {
            "rank",
            "idle_pct",
            "compute_pct",
            "non_compute_pct",
            "peak_allocated_bytes",
            "peak_reserved_bytes",
        } <= set(rank)
    assert report["gpu"] == {
        "name": "Tesla V100-SXM2-32GB",
        "catalog_gpu": "V100-32GB",
        "match": "'Tesla V100-SXM2-32GB' with 31.7 GiB is a V100-32GB",
    }


def test_analyze_trace_reports_peak_memory_against_capacity(catalog):
    out = StringIO()
    call_command("analyze_trace", str(LARGEST_TRACE), "--json", stdout=out)
    rank = json.loads(out.getvalue())["ranks"][0]
    assert (
        rank["peak_allocated_bytes"] > 0 and rank["capacity_bytes"] > rank["peak_allocated_bytes"]
    )
    assert 0 < rank["peak_memory_pct_of_capacity"] < 100


def test_analyze_trace_refuses_a_non_trace_with_the_reason(tmp_path, db):
    png = tmp_path / "picture.json"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    with pytest.raises(CommandError, match="PNG"):
        call_command("analyze_trace", str(png))


@pytest.mark.parametrize(
    ("name", "memory_gib", "expected"),
    [
        ("Tesla V100-SXM2-32GB", 31.7, "V100-32GB"),
        ("Tesla V100-SXM2-16GB", 15.8, "V100-16GB"),
        ("NVIDIA A100-PG509-200", 79.2, "A100-80GB-SXM"),
        ("NVIDIA A100-SXM4-40GB", 39.4, "A100-40GB-SXM"),
        ("NVIDIA H100 80GB HBM3", 79.6, "H100-SXM"),
        ("NVIDIA H100 PCIe", 79.6, "H100-PCIE"),
        ("NVIDIA L4", 22.0, "L4"),
        ("NVIDIA GeForce RTX 2080 Ti", 10.7, None),
        ("AMD Instinct MI300X", 191.5, "MI300X"),
    ],
)
def test_reported_gpu_names_match_the_catalogue(catalog, name, memory_gib, expected):
    match = match_device_name(name, int(memory_gib * 2**30), gpu_memory_gib_by_key())
    assert match.canonical_key == expected, match.reason


def test_the_triton_sample_reports_the_a100_it_ran_on(catalog):
    # A real trace from an A100 (PG509-200 board): matched to the catalogue by name and memory.
    out = StringIO()
    call_command("analyze_trace", str(SMALL_TRACE), "--json", stdout=out)
    assert json.loads(out.getvalue())["gpu"]["catalog_gpu"] in {"A100-40GB-SXM", "A100-80GB-SXM"}


def test_beat_runs_the_reaper_every_minute(db):
    from django_celery_beat.models import PeriodicTask

    task = PeriodicTask.objects.get(task="jobs.tasks.reap_stuck_jobs")
    assert (task.interval.every, task.interval.period) == (1, "minutes")
