"""A job's life after it was submitted: dispatched, claimed, heartbeats and progress, finished
or failed, and what the reaper must send again.

Every state change is a conditional UPDATE, so a duplicate delivery, a late zombie or two
workers racing cannot finish a job twice: claiming needs the job queued (or its worker gone
silent), finishing needs the claim token the claimer got.
"""

import os
import socket
import uuid
from datetime import timedelta
from typing import NamedTuple

from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone

from jobs.models import Job, JobStatus


class JobNotClaimable(Exception):
    """The job is done, failed, or another live worker holds it."""


def job_dispatched(*, job_id: int) -> None:
    """The broker accepted the job's message."""
    Job.objects.filter(pk=job_id).update(dispatched_at=timezone.now())


def _claimable() -> Q:
    stale = timezone.now() - timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT_S)
    return Q(status=JobStatus.QUEUED) | Q(status=JobStatus.RUNNING, heartbeat_at__lt=stale)


class JobOutOfAttempts(Exception):
    """The job's worker died on every attempt it had: it is failed, not tried again."""


def job_claim(*, job_id: int) -> uuid.UUID:
    """Take the job for this process and return the claim token. Raises JobNotClaimable when it
    is finished or a live worker holds it, JobOutOfAttempts (after failing it) when its
    earlier attempts all died with their workers."""
    token = uuid.uuid4()
    now = timezone.now()
    claimed = Job.objects.filter(
        _claimable(), pk=job_id, attempts__lt=settings.JOB_MAX_ATTEMPTS
    ).update(
        status=JobStatus.RUNNING,
        claim_token=token,
        attempts=F("attempts") + 1,
        worker=f"{socket.gethostname()}:{os.getpid()}",
        started_at=now,
        heartbeat_at=now,
        progress_pct=0,
        stage="starting",
    )
    if claimed:
        return token
    out_of_attempts = Job.objects.filter(
        _claimable(), pk=job_id, attempts__gte=settings.JOB_MAX_ATTEMPTS
    ).update(
        status=JobStatus.FAILED,
        stage="failed",
        finished_at=now,
        error=(
            f"The analysis stopped {settings.JOB_MAX_ATTEMPTS} times without finishing (its "
            "worker was lost each time). The upload may be too large or malformed."
        ),
    )
    if out_of_attempts:
        raise JobOutOfAttempts(job_id)
    raise JobNotClaimable(job_id)


def job_heartbeat(*, job_id: int, token: uuid.UUID) -> None:
    Job.objects.filter(pk=job_id, claim_token=token, status=JobStatus.RUNNING).update(
        heartbeat_at=timezone.now()
    )


def job_progress(*, job_id: int, token: uuid.UUID, pct: int, stage: str) -> None:
    Job.objects.filter(pk=job_id, claim_token=token, status=JobStatus.RUNNING).update(
        progress_pct=max(0, min(pct, 100)), stage=stage[:200], heartbeat_at=timezone.now()
    )


def job_finish(*, job_id: int, token: uuid.UUID, report: dict) -> bool:
    return bool(
        Job.objects.filter(pk=job_id, claim_token=token, status=JobStatus.RUNNING).update(
            status=JobStatus.DONE,
            report=report,
            progress_pct=100,
            stage="done",
            finished_at=timezone.now(),
        )
    )


def job_fail(*, job_id: int, error: str, token: uuid.UUID | None = None) -> bool:
    """Fail the job with a message a person can act on. Without a token: any unfinished job
    (the reaper and the attempt cap use this)."""
    jobs = Job.objects.filter(pk=job_id).exclude(status__in=[JobStatus.DONE, JobStatus.FAILED])
    if token is not None:
        jobs = jobs.filter(claim_token=token)
    return bool(
        jobs.update(
            status=JobStatus.FAILED, error=error[:2000], stage="failed", finished_at=timezone.now()
        )
    )


class JobsToSend(NamedTuple):
    silent: list[int]  # running, but their worker stopped reporting
    undispatched: list[int]  # the broker never took their message
    forgotten: list[int]  # sent longer ago than the visibility timeout and never started


def jobs_to_send_again() -> JobsToSend:
    """Running jobs whose worker went silent, queued jobs the broker never took (after
    JOB_DISPATCH_GRACE_S), and queued jobs whose message was lost (sent longer ago than the
    broker's visibility timeout, e.g. a broker restart without persistence)."""
    now = timezone.now()
    stale = now - timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT_S)
    never_sent = now - timedelta(seconds=settings.JOB_DISPATCH_GRACE_S)
    lost = now - timedelta(seconds=settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"])
    queued = Job.objects.filter(status=JobStatus.QUEUED)
    return JobsToSend(
        silent=list(
            Job.objects.filter(status=JobStatus.RUNNING, heartbeat_at__lt=stale).values_list(
                "pk", flat=True
            )
        ),
        undispatched=list(
            queued.filter(dispatched_at__isnull=True, created_at__lt=never_sent).values_list(
                "pk", flat=True
            )
        ),
        forgotten=list(queued.filter(dispatched_at__lt=lost).values_list("pk", flat=True)),
    )
