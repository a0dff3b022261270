"""Writes for jobs: submit (and enqueue after commit), claim, progress, finish, fail, reap.

Every state change is a conditional UPDATE, so a duplicate delivery, a late zombie or two
workers racing cannot finish a job twice: claiming needs the job pending (or its worker gone
silent), finishing needs the claim token the claimer got.
"""

import hashlib
import logging
import os
import socket
import uuid
from collections.abc import Iterable
from datetime import timedelta

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from accounts.models import Team
from jobs.models import Job, JobFile, JobStatus

logger = logging.getLogger(__name__)


class JobNotClaimable(Exception):
    """The job is done, failed, or another live worker holds it."""


def _digest(upload: UploadedFile) -> str:
    sha = hashlib.sha256()
    for chunk in upload.chunks():
        sha.update(chunk)
    upload.seek(0)
    return sha.hexdigest()


def job_submit(*, team: Team, user, kind: str, uploads: Iterable[UploadedFile]) -> Job:
    """Store the files, create the job, and enqueue it once the transaction commits. The
    same files uploaded again by the same team reuse the finished report."""
    from jobs.tasks import analyze_job

    uploads = list(uploads)
    digests = [_digest(upload) for upload in uploads]
    combined = hashlib.sha256("\n".join(sorted(digests)).encode()).hexdigest()
    previous = (
        Job.objects.filter(team=team, kind=kind, inputs_sha256=combined, status=JobStatus.DONE)
        .order_by("-finished_at")
        .first()
    )
    with transaction.atomic():
        job = Job.objects.create(team=team, created_by=user, kind=kind, inputs_sha256=combined)
        for upload, digest in zip(uploads, digests, strict=True):
            JobFile.objects.create(
                job=job,
                name=(upload.name or "upload")[:255],
                file=upload,
                sha256=digest,
                size_bytes=upload.size,
            )
        if previous:
            Job.objects.filter(pk=job.pk).update(
                status=JobStatus.DONE,
                progress_pct=100,
                stage="same files as an earlier job",
                report=previous.report,
                reused_from=previous,
                finished_at=timezone.now(),
            )
        else:
            transaction.on_commit(lambda: analyze_job.delay(job.pk))
    job.refresh_from_db()
    return job


def _claimable() -> Q:
    stale = timezone.now() - timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT_S)
    return Q(status=JobStatus.PENDING) | Q(status=JobStatus.RUNNING, heartbeat_at__lt=stale)


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


def jobs_reap() -> dict[str, int]:
    """Jobs whose worker went silent, and pending jobs whose message was lost, are sent again."""
    from jobs.tasks import analyze_job

    stale = timezone.now() - timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT_S)
    silent = Job.objects.filter(status=JobStatus.RUNNING, heartbeat_at__lt=stale)
    requeued = 0
    for job_id in silent.values_list("pk", flat=True):
        # The delivery decides: it claims the job again, or fails it when out of attempts.
        transaction.on_commit(lambda pk=job_id: analyze_job.delay(pk))
        requeued += 1
    # Pending jobs nobody picked up by the time the broker would have redelivered their
    # message: the message was lost (a broker restart without persistence); send it again.
    lost = timezone.now() - timedelta(
        seconds=settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]
    )
    forgotten = Job.objects.filter(status=JobStatus.PENDING, created_at__lt=lost)
    for job_id in forgotten.values_list("pk", flat=True):
        transaction.on_commit(lambda pk=job_id: analyze_job.delay(pk))
    return {"requeued": requeued, "resent": forgotten.count()}
