"""Jobs through a real Celery worker (Redis broker, PostgreSQL): they finish exactly once
whatever happens to the worker, and hostile uploads fail fast with a message."""

import gzip
import io
import os
import signal
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from jobs.models import Job, JobStatus
from jobs.services import job_submit
from jobs.tasks import jobs_reap
from tests.helpers import DLRM, LARGEST_TRACE, SMALL_TRACE, distinct_copy, upload

pytestmark = pytest.mark.django_db(transaction=True)


def wait_until(condition, timeout_s: float, interval_s: float = 0.2):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval_s)
    raise AssertionError(f"not true within {timeout_s} s")


def all_finished(jobs: list[Job]) -> bool:
    return all(job.finished for job in Job.objects.filter(pk__in=[j.pk for j in jobs]))


def submit(team, *uploads) -> Job:
    return job_submit(team=team.team, user=team.member, kind="trace", uploads=uploads)


def test_a_real_worker_analyses_an_uploaded_multi_rank_trace(worker, team, catalog):
    job = submit(team, *(upload(path) for path in DLRM))
    wait_until(lambda: Job.objects.get(pk=job.pk).finished, 90)
    job.refresh_from_db()
    assert job.status == JobStatus.DONE, job.error
    assert [rank["rank"] for rank in job.report["ranks"]] == list(range(8))
    assert job.report["gpu"]["catalog_gpu"] == "V100-32GB"
    assert job.attempts == 1 and job.progress_pct == 100


def test_killing_a_worker_child_mid_job_loses_nothing(worker, team):
    jobs = [submit(team, distinct_copy(DLRM[i % 8], i)) for i in range(10)]

    def running_child() -> tuple[int, Job] | None:
        # Still analysing (the report is written at 95%): a job caught while its result is
        # being saved would finish in its first attempt, and the kill would test nothing.
        job = Job.objects.filter(
            pk__in=[j.pk for j in jobs], status=JobStatus.RUNNING, progress_pct__lt=90
        ).first()
        return (int(job.worker.rsplit(":", 1)[1]), job) if job and job.worker else None

    pid, victim = wait_until(running_child, 60, 0.02)
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: all_finished(jobs), 180)
    finished = Job.objects.filter(pk__in=[j.pk for j in jobs])
    assert {job.status for job in finished} == {JobStatus.DONE}
    victim.refresh_from_db()
    assert victim.attempts == 2  # its first attempt died with the child
    assert all(job.attempts <= 2 for job in finished)


def test_killing_the_whole_worker_loses_nothing_after_a_restart(worker, team):
    jobs = [submit(team, distinct_copy(DLRM[i % 8], 100 + i)) for i in range(10)]
    wait_until(lambda: Job.objects.filter(status=JobStatus.RUNNING).exists(), 60, 0.05)
    worker.kill()
    unfinished = Job.objects.filter(pk__in=[j.pk for j in jobs]).exclude(status=JobStatus.DONE)
    assert unfinished.exists()
    time.sleep(9)  # past the visibility timeout, so Redis gives the messages back
    worker.start()
    jobs_reap()  # what beat runs periodically: silent running jobs are sent again
    wait_until(lambda: all_finished(jobs), 180)
    finished = Job.objects.filter(pk__in=[j.pk for j in jobs])
    assert {job.status for job in finished} == {JobStatus.DONE}
    assert all(1 <= job.attempts <= 2 for job in finished)


def test_a_poison_job_fails_after_two_attempts_while_the_others_complete(worker, team):
    poison = submit(team, upload(LARGEST_TRACE))  # the slowest sample: time to kill it
    others = [submit(team, distinct_copy(DLRM[i % 8], 200 + i)) for i in range(10)]
    killed: set[str] = set()
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        current = Job.objects.get(pk=poison.pk)
        if current.finished:
            break
        # This upload "kills its worker": every attempt's process dies mid-analysis.
        if (
            current.status == JobStatus.RUNNING
            and current.worker
            and (f"{current.attempts}:{current.worker}" not in killed)
        ):
            killed.add(f"{current.attempts}:{current.worker}")
            os.kill(int(current.worker.rsplit(":", 1)[1]), signal.SIGKILL)
        time.sleep(0.02)
    poison.refresh_from_db()
    assert poison.status == JobStatus.FAILED
    assert "stopped 2 times" in poison.error and poison.attempts == 2
    wait_until(lambda: all_finished(others), 180)
    assert {job.status for job in Job.objects.filter(pk__in=[j.pk for j in others])} == {
        JobStatus.DONE
    }


def gzip_bomb() -> bytes:
    """A trace's opening and then 3.2 GB of blanks: about 3 MB compressed."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=9) as out:
        out.write(b'{"traceEvents": [')
        chunk = b" " * (16 * 1024 * 1024)
        for _ in range(200):
            out.write(chunk)
    return buffer.getvalue()


def hostile_uploads() -> dict[str, tuple[bytes, str]]:
    trace = SMALL_TRACE.read_bytes()
    nested = b'{"traceEvents": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    return {
        "gzip bomb": (gzip_bomb(), "decompressed size exceeds"),
        "truncated gzip": (trace[: len(trace) // 2], "truncated"),
        "deeply nested json": (nested, "nested deeper"),
        "json that is not a trace": (b'{"hello": "world"}', "not a trace"),
        "png renamed .json": (b"\x89PNG\r\n\x1a\n" + b"\0" * 64, "PNG"),
        "empty file": (b"", "empty"),
    }


@pytest.mark.parametrize("case", list(hostile_uploads()), ids=str)
def test_a_hostile_upload_ends_as_a_failed_job_with_a_specific_message(worker, team, case):
    data, expected = hostile_uploads()[case]
    start = time.monotonic()
    job = submit(team, SimpleUploadedFile("trace.json", data))
    wait_until(lambda: Job.objects.get(pk=job.pk).finished, 60)
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED
    assert expected.lower() in job.error.lower(), job.error
    assert job.error.startswith("trace.json: ")  # the uploaded name, not ours on disk
    assert time.monotonic() - start < 30
