"""Job tasks: claim the job, run the analysis in a memory-capped child, record the outcome."""

import json
import logging
import resource
import subprocess
import sys
import threading

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import DatabaseError, close_old_connections

from advisor.services import rightsizing_report
from jobs.models import Job, JobKind
from jobs.reports import trace_ranks
from jobs.services import (
    JobNotClaimable,
    JobOutOfAttempts,
    job_claim,
    job_fail,
    job_finish,
    job_heartbeat,
    job_progress,
    jobs_reap,
)

logger = logging.getLogger(__name__)


def _limit_memory() -> None:  # runs in the child, before exec
    limit = settings.JOB_ANALYSIS_MEMORY_BYTES
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _best_effort(write, **kwargs) -> None:
    """Progress and heartbeats are advisory: a failed write must not stop the analysis."""
    try:
        write(**kwargs)
    except DatabaseError:
        logger.warning("could not record progress of job %s", kwargs.get("job_id"), exc_info=True)


def _run_analysis(job: Job, token, timeout_s: int) -> dict:
    files = list(job.files.all())
    command = [
        sys.executable,
        "-m",
        "jobs.runner",
        "--kind",
        job.kind,
        "--max-decompressed-bytes",
        str(settings.JOB_MAX_DECOMPRESSED_BYTES),
        "--names",
        json.dumps([f.name for f in files]),
        *[f.file.path for f in files],
    ]
    child = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_limit_memory,
        cwd=settings.BASE_DIR,
    )

    def follow_progress() -> None:
        for line in child.stderr:
            if line.startswith("PROGRESS "):
                _, pct, stage = line.rstrip("\n").split(" ", 2)
                _best_effort(
                    job_progress, job_id=job.pk, token=token, pct=int(pct) * 9 // 10, stage=stage
                )
        close_old_connections()

    reader = threading.Thread(target=follow_progress, daemon=True)
    reader.start()
    beating = threading.Event()

    def heartbeat() -> None:
        # A long silent parse must not look like a dead worker.
        while not beating.wait(max(settings.JOB_HEARTBEAT_TIMEOUT_S / 3, 1)):
            _best_effort(job_heartbeat, job_id=job.pk, token=token)
        close_old_connections()

    beat = threading.Thread(target=heartbeat, daemon=True)
    beat.start()
    timed_out = threading.Event()

    def stop() -> None:
        timed_out.set()
        child.kill()

    watchdog = threading.Timer(timeout_s, stop)
    watchdog.start()
    try:
        stdout = child.stdout.read()
        child.wait()
    except SoftTimeLimitExceeded:
        child.kill()
        child.wait()
        raise
    finally:
        watchdog.cancel()
        beating.set()
        reader.join(5)
        beat.join(5)
    if timed_out.is_set():
        raise subprocess.TimeoutExpired(command, timeout_s)
    if child.returncode < 0:
        return {
            "error": f"the analysis process was killed by signal {-child.returncode} "
            "(out of memory?): upload fewer or smaller files"
        }
    try:
        return json.loads(stdout)
    except json.JSONDecodeError:
        return {"error": f"the analysis process failed (exit {child.returncode})"}


@shared_task(bind=True, max_retries=None)
def analyze_job(self, job_id: int) -> str:
    """One delivery of one job. Duplicates are no-ops; a job whose worker died comes back here
    (acks_late + reject_on_worker_lost) and is claimed again once its heartbeat lapsed, or
    failed once it has used its attempts: a poison upload never loops."""
    try:
        token = job_claim(job_id=job_id)
    except JobOutOfAttempts:
        return "failed: out of attempts"
    except JobNotClaimable:
        current = Job.objects.filter(pk=job_id).first()
        if current is None or current.finished:
            return "nothing to do: finished or deleted"
        # A worker holds it (or just died holding it): look again once its heartbeat lapsed.
        raise self.retry(countdown=settings.JOB_HEARTBEAT_TIMEOUT_S) from None
    job = Job.objects.get(pk=job_id)
    try:
        outcome = _run_analysis(job, token, timeout_s=settings.CELERY_TASK_SOFT_TIME_LIMIT - 10)
    except (subprocess.TimeoutExpired, SoftTimeLimitExceeded):
        job_fail(
            job_id=job_id,
            token=token,
            error=(
                f"The analysis took longer than {settings.CELERY_TASK_SOFT_TIME_LIMIT} s and was "
                "stopped: upload fewer or smaller files."
            ),
        )
        return "failed: time limit"
    if "error" in outcome:
        job_fail(job_id=job_id, token=token, error=outcome["error"])
        return "failed"
    job_progress(job_id=job_id, token=token, pct=95, stage="writing the report")
    report = outcome["report"]
    if job.kind != JobKind.CODESCAN:
        report = rightsizing_report(summary=report, ranks=trace_ranks(report))
    job_finish(job_id=job_id, token=token, report=report)
    return "done"


@shared_task
def reap_stuck_jobs() -> dict[str, int]:
    return jobs_reap()
