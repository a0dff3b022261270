"""Submitting jobs: store the files, create the job (once per Idempotency-Key), and dispatch
it after the transaction commits. Dispatch may fail (the broker is down): the job is committed
first, and the reaper sends whatever the broker never accepted. What happens to a job after
that is in jobs/lifecycle.py."""

import hashlib
from collections.abc import Iterable
from datetime import datetime, timedelta
from functools import partial
from typing import NamedTuple

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import Team
from jobs.models import Job, JobFile, JobStatus
from jobs.tasks import job_dispatch


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
