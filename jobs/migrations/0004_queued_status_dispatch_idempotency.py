"""Jobs are `queued` (was `pending`) until a worker claims them, with `dispatched_at` set once
the broker accepted their message, and an optional per-team Idempotency-Key.

Jobs that were pending become queued with no `dispatched_at`: the reaper sends each once more
(a duplicate delivery of a job that was in fact sent is a no-op, the claim is conditional).
"""

from django.db import migrations, models


def pending_to_queued(apps, schema_editor):
    apps.get_model("jobs", "Job").objects.filter(status="pending").update(status="queued")


def queued_to_pending(apps, schema_editor):
    apps.get_model("jobs", "Job").objects.filter(status="queued").update(status="pending")


class Migration(migrations.Migration):
    dependencies = [
        ("jobs", "0003_codescan_kind"),
    ]

    operations = [
        migrations.AddField(
            model_name="job",
            name="dispatched_at",
            field=models.DateTimeField(
                blank=True, help_text="When the broker accepted the job's message.", null=True
            ),
        ),
        migrations.AddField(
            model_name="job",
            name="idempotency_key",
            field=models.CharField(
                blank=True,
                help_text="The client's Idempotency-Key: a retry with it returns this job.",
                default="",
                max_length=255,
            ),
        ),
        migrations.AlterField(
            model_name="job",
            name="status",
            field=models.CharField(
                choices=[
                    ("queued", "Queued"),
                    ("running", "Running"),
                    ("done", "Done"),
                    ("failed", "Failed"),
                ],
                default="queued",
                max_length=10,
            ),
        ),
        migrations.AddIndex(
            model_name="job",
            index=models.Index(
                fields=["status", "dispatched_at"], name="jobs_job_status_579fd2_idx"
            ),
        ),
        migrations.AddConstraint(
            model_name="job",
            constraint=models.UniqueConstraint(
                condition=models.Q(("idempotency_key", ""), _negated=True),
                fields=("team", "idempotency_key"),
                name="job_idempotency_key_per_team",
            ),
        ),
        migrations.RunPython(pending_to_queued, queued_to_pending),
    ]
