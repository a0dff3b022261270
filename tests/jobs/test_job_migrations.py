"""Migration 0004 renames the `pending` status to `queued`: jobs that were waiting keep waiting,
with no `dispatched_at`, so the reaper sends each once more (a duplicate delivery is a no-op)."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from jobs.models import Job, JobStatus

BEFORE = [("jobs", "0003_codescan_kind")]
AFTER = [("jobs", "0004_queued_status_dispatch_idempotency")]


@pytest.mark.django_db(transaction=True)
def test_pending_jobs_become_queued_and_undispatched_and_back():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    team = old.get_model("accounts", "Team").objects.create(name="Old", slug="old")
    old_job = old.get_model("jobs", "Job")
    waiting = old_job.objects.create(team=team, kind="trace", inputs_sha256="a" * 64)
    running = old_job.objects.create(
        team=team, kind="trace", inputs_sha256="b" * 64, status="running"
    )
    assert waiting.status == "pending"

    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)
    assert Job.objects.get(pk=waiting.pk).status == JobStatus.QUEUED
    assert Job.objects.get(pk=waiting.pk).dispatched_at is None
    assert Job.objects.get(pk=running.pk).status == JobStatus.RUNNING

    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    assert old_job.objects.get(pk=waiting.pk).status == "pending"

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
