"""A Job is one upload's trip through a worker: queued -> running -> done | failed.

A queued job is committed before its message goes to the broker; `dispatched_at` is set only
once the broker accepted the message, so the reaper can tell "never sent" from "sent, lost".
"""

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse

from accounts.models import Team


class JobKind(models.TextChoices):
    TRACE = "trace", "profiling trace"
    CODESCAN = "codescan", "code scan"


class JobStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


def upload_path(instance: "JobFile", filename: str) -> str:
    # Our own name on disk: the uploaded name is kept in `name`, never used as a path.
    return f"jobs/{instance.job.team_id}/{instance.job.public_id}/{uuid.uuid4().hex}"


class Job(models.Model):
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="jobs")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="jobs"
    )
    kind = models.CharField(max_length=20, choices=JobKind.choices)
    status = models.CharField(max_length=10, choices=JobStatus.choices, default=JobStatus.QUEUED)
    progress_pct = models.PositiveSmallIntegerField(default=0)
    stage = models.CharField(max_length=200, blank=True)
    inputs_sha256 = models.CharField(max_length=64, help_text="Digest over the inputs' digests.")
    report = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    claim_token = models.UUIDField(null=True, blank=True)
    worker = models.CharField(max_length=200, blank=True, help_text="host:pid of the claimer")
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    reused_from = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL)
    idempotency_key = models.CharField(
        max_length=255,
        blank=True,
        default="",
        help_text="The client's Idempotency-Key: a retry with it returns this job.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    dispatched_at = models.DateTimeField(
        null=True, blank=True, help_text="When the broker accepted the job's message."
    )
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["team", "kind", "inputs_sha256"]),
            models.Index(fields=["status", "heartbeat_at"]),
            models.Index(fields=["status", "dispatched_at"]),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(progress_pct__lte=100), name="job_progress_pct"),
            models.CheckConstraint(
                condition=~Q(status="done") | Q(report__isnull=False), name="job_done_has_report"
            ),
            models.CheckConstraint(
                condition=~Q(status="failed") | ~Q(error=""), name="job_failed_has_error"
            ),
            # Two concurrent retries with one key cannot both create a job.
            models.UniqueConstraint(
                fields=["team", "idempotency_key"],
                condition=~Q(idempotency_key=""),
                name="job_idempotency_key_per_team",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.public_id} ({self.status})"

    def get_absolute_url(self) -> str:
        return reverse("jobs:detail", kwargs={"public_id": self.public_id})

    @property
    def finished(self) -> bool:
        return self.status in {JobStatus.DONE, JobStatus.FAILED}


class JobFile(models.Model):
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="files")
    name = models.CharField(max_length=255, help_text="The name it was uploaded under.")
    file = models.FileField(upload_to=upload_path, max_length=300)
    sha256 = models.CharField(max_length=64)
    size_bytes = models.BigIntegerField()

    class Meta:
        ordering = ["name", "id"]

    def __str__(self) -> str:
        return self.name


class DismissalReason(models.TextChoices):
    FALSE_POSITIVE = "false-positive", "false positive"
    WONT_FIX = "wont-fix", "won't fix"
    USED_IN_TESTS = "used-in-tests", "used in tests"


class FindingDismissal(models.Model):
    """A team's decision that a code-scan finding needs no action, as GitHub code scanning's
    dismissed alerts: keyed by the finding's fingerprint (jobs.domain.codescan.fingerprints),
    so it holds for every scan of the team's that finds the same line again."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="finding_dismissals")
    fingerprint = models.CharField(max_length=64)
    rule_id = models.CharField(max_length=20, help_text="The rule of the finding dismissed.")
    file = models.CharField(max_length=500, help_text="Where the finding was when dismissed.")
    reason = models.CharField(max_length=20, choices=DismissalReason.choices)
    comment = models.CharField(max_length=280, blank=True)
    dismissed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    dismissed_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-dismissed_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["team", "fingerprint"], name="finding_dismissal_once_per_team"
            )
        ]

    def __str__(self) -> str:
        return f"{self.rule_id} {self.file} dismissed ({self.reason})"
