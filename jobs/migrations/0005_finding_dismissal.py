"""Teams dismiss code-scan findings by fingerprint (FindingDismissal)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0002_team_max_token_lifetime_days"),
        ("jobs", "0004_queued_status_dispatch_idempotency"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="FindingDismissal",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("fingerprint", models.CharField(max_length=64)),
                (
                    "rule_id",
                    models.CharField(help_text="The rule of the finding dismissed.", max_length=20),
                ),
                (
                    "file",
                    models.CharField(
                        help_text="Where the finding was when dismissed.", max_length=500
                    ),
                ),
                (
                    "reason",
                    models.CharField(
                        choices=[
                            ("false-positive", "false positive"),
                            ("wont-fix", "won't fix"),
                            ("used-in-tests", "used in tests"),
                        ],
                        max_length=20,
                    ),
                ),
                ("comment", models.CharField(blank=True, max_length=280)),
                ("dismissed_at", models.DateTimeField(auto_now=True)),
                (
                    "dismissed_by",
                    models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "team",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="finding_dismissals",
                        to="accounts.team",
                    ),
                ),
            ],
            options={
                "ordering": ["-dismissed_at", "-id"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("team", "fingerprint"), name="finding_dismissal_once_per_team"
                    )
                ],
            },
        ),
    ]
