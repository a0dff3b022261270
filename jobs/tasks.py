"""Job tasks: claim the job, run the analysis child (jobs/runner.py), record the outcome; and
sending jobs to the broker, which the submit service and the reaper both do."""

import logging
import threading
from functools import partial

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import DatabaseError, close_old_connections, transaction
from kombu.exceptions import OperationalError as BrokerUnavailable

from advisor.services import rightsizing_report
from jobs.lifecycle import (
    JobNotClaimable,
    JobOutOfAttempts,
    job_claim,
    job_dispatched,
    job_fail,
    job_finish,
    job_heartbeat,
    job_progress,
    jobs_to_send_again,
)
from jobs.models import Job, JobKind
from jobs.reports import trace_ranks
from jobs.runner import AnalysisLimits, AnalysisTimedOut, run_analysis

logger = logging.getLogger(__name__)


def _best_effort(write, **kwargs) -> None:
    """Progress and heartbeats are advisory: a failed write must not stop the analysis."""
    try:
        write(**kwargs)
    except DatabaseError:
        logger.warning("could not record progress of job %s", kwargs.get("job_id"), exc_info=True)


def _run_analysis(job: Job, token) -> dict:
    """The child's outcome, with heartbeats kept while it runs: a long silent parse must not
    look like a dead worker. Progress is scaled to 90%: writing the report is the rest."""
    beating = threading.Event()

    def heartbeat() -> None:
        while not beating.wait(max(settings.JOB_HEARTBEAT_TIMEOUT_S / 3, 1)):
            _best_effort(job_heartbeat, job_id=job.pk, token=token)
        close_old_connections()

    beat = threading.Thread(target=heartbeat, daemon=True)
    beat.start()
    try:
        return run_analysis(
            kind=job.kind,
            files=[(f.file.path, f.name) for f in job.files.all()],
            limits=AnalysisLimits(
                memory_bytes=settings.JOB_ANALYSIS_MEMORY_BYTES,
                max_decompressed_bytes=settings.JOB_MAX_DECOMPRESSED_BYTES,
                timeout_s=settings.CELERY_TASK_SOFT_TIME_LIMIT - 10,
            ),
            on_progress=lambda pct, stage: _best_effort(
                job_progress, job_id=job.pk, token=token, pct=pct * 9 // 10, stage=stage
            ),
            cwd=settings.BASE_DIR,
        )
    finally:
        beating.set()
        beat.join(5)


def job_dispatch(*, job_id: int) -> bool:
    """Send the job's message and record that the broker accepted it. A broker that is down or
    hung is logged, not raised (the job is already committed; failing the request now would
    invite a duplicate): the job stays queued and the reaper sends it."""
    try:
        analyze_job.delay(job_id)
    except BrokerUnavailable:
        logger.warning("the broker did not take job %s; the reaper will send it", job_id)
        return False
    job_dispatched(job_id=job_id)
    return True


def jobs_reap() -> dict[str, int]:
    """Send again what lifecycle.jobs_to_send_again lists. The delivery decides: it claims the
    job again, or fails it when out of attempts."""
    due = jobs_to_send_again()
    for job_id in [*due.silent, *due.undispatched, *due.forgotten]:
        transaction.on_commit(partial(job_dispatch, job_id=job_id))
    return {
        "requeued": len(due.silent),
        "dispatched": len(due.undispatched),
        "resent": len(due.forgotten),
    }


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
        outcome = _run_analysis(job, token)
    except (AnalysisTimedOut, SoftTimeLimitExceeded):
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
