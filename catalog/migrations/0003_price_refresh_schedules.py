"""The default refresh schedule: each source every 6 hours, 2 hours apart, editable in the
admin (django-celery-beat). A run may start at most 5 hours late, never into the next one."""

import json
from datetime import timedelta

from django.db import migrations
from django.utils import timezone

SOURCES = ("gpuhunt", "azure", "skypilot")
EVERY_HOURS = 6
STAGGER_HOURS = 2
EXPIRES_HOURS = 5


def create_schedules(apps, schema_editor):
    interval_model = apps.get_model("django_celery_beat", "IntervalSchedule")
    task_model = apps.get_model("django_celery_beat", "PeriodicTask")
    every, _ = interval_model.objects.get_or_create(every=EVERY_HOURS, period="hours")
    now = timezone.now()
    for index, source in enumerate(SOURCES):
        task_model.objects.get_or_create(
            name=f"Refresh prices: {source}",
            defaults={
                "task": "catalog.tasks.refresh_prices",
                "interval": every,
                "args": json.dumps([source]),
                "start_time": now + timedelta(hours=index * STAGGER_HOURS),
                "expire_seconds": EXPIRES_HOURS * 3600,
                "description": f"Fetch {source} prices; a failed or implausible feed changes nothing.",
            },
        )


def remove_schedules(apps, schema_editor):
    task_model = apps.get_model("django_celery_beat", "PeriodicTask")
    task_model.objects.filter(name__in=[f"Refresh prices: {s}" for s in SOURCES]).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0002_price_refresh_and_quarantine"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(create_schedules, remove_schedules)]
