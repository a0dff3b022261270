"""Writes for jobs: submit (and dispatch after commit), claim, progress, finish, fail, reap.

Every state change is a conditional UPDATE, so a duplicate delivery, a late zombie or two
workers racing cannot finish a job twice: claiming needs the job queued (or its worker gone
silent), finishing needs the claim token the claimer got. Dispatch may fail (the broker is
down): the job is committed first, and the reaper sends whatever the broker never accepted.
"""

import hashlib
import logging
import os
import socket
import uuid
from collections.abc import Iterable
from datetime import datetime, timedelta
from functools import partial
from typing import NamedTuple

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerUnavailable

from accounts.models import Team
from jobs.models import Job, JobFile, JobStatus

logger = logging.getLogger(__name__)


class JobNotClaimable(Exception):
    """The job is done, failed, or another live worker holds it."""


class IdempotencyKeyReused(Exception):
    """The Idempotency-Key already names a job made of other files, or of another kind."""


class JobSubmission(NamedTuple):
    job: Job
    created: bool  # False: an earlier request with the same Idempotency-Key made the job


def _digest(upload: UploadedFile) -> str:
    sha = hashlib.sha256()
    for chunk in upload.chunks():
        sha.update(chunk)
    upload.seek(0)
    return sha.hexdigest()


def job_submit(*, team: Team, user, kind: str, uploads: Iterable[UploadedFile]) -> Job:
    """Store the files, create the job, and dispatch it once the transaction commits. The
    same files uploaded again by the same team reuse the finished report."""
    return job_submit_idempotent(
        team=team, user=user, kind=kind, uploads=uploads, idempotency_key=None
    ).job


def job_submit_idempotent(
    *,
    team: Team,
    user,
    kind: str,
    uploads: Iterable[UploadedFile],
    idempotency_key: str | None,
) -> JobSubmission:
    """job_submit, and a retry with the same key (per team, for JOB_IDEMPOTENCY_KEY_TTL_S)
    returns the job the first request made instead of a second one. Raises
    IdempotencyKeyReused when the key names a job of other files or another kind."""
    uploads = list(uploads)
    digests = [_digest(upload) for upload in uploads]
    combined = hashlib.sha256("\n".join(sorted(digests)).encode()).hexdigest()
    if idempotency_key is not None:
        earlier = _job_for_key(team=team, key=idempotency_key)
        if earlier is not None:
            return _replay(earlier, kind=kind, inputs_sha256=combined)
    previous = (
        Job.objects.filter(team=team, kind=kind, inputs_sha256=combined, status=JobStatus.DONE)
        .order_by("-finished_at")
        .first()
    )
    try:
        with transaction.atomic():
            if idempotency_key is not None:
                # An expired key is free again: its old job lets go of it.
                Job.objects.filter(
                    team=team, idempotency_key=idempotency_key, created_at__lt=_keys_live_since()
                ).update(idempotency_key="")
            job = Job.objects.create(
                team=team,
                created_by=user,
                kind=kind,
                inputs_sha256=combined,
                idempotency_key=idempotency_key or "",
            )
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
                transaction.on_commit(partial(job_dispatch, job_id=job.pk))
    except IntegrityError:
        # A concurrent request with the same key committed first: answer with its job.
        earlier = _job_for_key(team=team, key=idempotency_key) if idempotency_key else None
        if earlier is None:
            raise
        return _replay(earlier, kind=kind, inputs_sha256=combined)
    job.refresh_from_db()
    return JobSubmission(job=job, created=True)


def _keys_live_since() -> datetime:
    return timezone.now() - timedelta(seconds=settings.JOB_IDEMPOTENCY_KEY_TTL_S)


def _job_for_key(*, team: Team, key: str) -> Job | None:
    return Job.objects.filter(
        team=team, idempotency_key=key, created_at__gte=_keys_live_since()
    ).first()


def _replay(earlier: Job, *, kind: str, inputs_sha256: str) -> JobSubmission:
    if earlier.kind != kind or earlier.inputs_sha256 != inputs_sha256:
        raise IdempotencyKeyReused(earlier.idempotency_key)
    return JobSubmission(job=earlier, created=False)


def job_dispatch(*, job_id: int) -> bool:
    """Send the job's message and record that the broker accepted it. A broker that is down or
    hung is logged, not raised (the job is already committed; failing the request now would
    invite a duplicate): the job stays queued and the reaper sends it."""
    from jobs.tasks import analyze_job

    try:
        analyze_job.delay(job_id)
    except BrokerUnavailable:
        logger.warning("the broker did not take job %s; the reaper will send it", job_id)
        return False
    Job.objects.filter(pk=job_id).update(dispatched_at=timezone.now())
    return True


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


def jobs_reap() -> dict[str, int]:
    """Send again: running jobs whose worker went silent, queued jobs the broker never took
    (after JOB_DISPATCH_GRACE_S), and queued jobs whose message was lost (sent longer ago than
    the broker's visibility timeout, e.g. a broker restart without persistence)."""
    now = timezone.now()
    stale = now - timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT_S)
    never_sent = now - timedelta(seconds=settings.JOB_DISPATCH_GRACE_S)
    lost = now - timedelta(seconds=settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"])
    # The delivery decides: it claims the job again, or fails it when out of attempts.
    silent = list(
        Job.objects.filter(status=JobStatus.RUNNING, heartbeat_at__lt=stale).values_list(
            "pk", flat=True
        )
    )
    undispatched = list(
        Job.objects.filter(
            status=JobStatus.QUEUED, dispatched_at__isnull=True, created_at__lt=never_sent
        ).values_list("pk", flat=True)
    )
    forgotten = list(
        Job.objects.filter(status=JobStatus.QUEUED, dispatched_at__lt=lost).values_list(
            "pk", flat=True
        )
    )
    for job_id in [*silent, *undispatched, *forgotten]:
        transaction.on_commit(partial(job_dispatch, job_id=job_id))
    return {"requeued": len(silent), "dispatched": len(undispatched), "resent": len(forgotten)}
