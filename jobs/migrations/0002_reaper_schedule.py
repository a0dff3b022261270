"""Beat runs the reaper every minute: jobs whose worker went silent are sent again (and failed
once out of attempts); pending jobs whose message was lost are re-sent."""

from django.db import migrations


def create(apps, schema_editor):
    interval_model = apps.get_model("django_celery_beat", "IntervalSchedule")
    task_model = apps.get_model("django_celery_beat", "PeriodicTask")
    every, _ = interval_model.objects.get_or_create(every=1, period="minutes")
    task_model.objects.get_or_create(
        name="Reap stuck jobs",
        defaults={
            "task": "jobs.tasks.reap_stuck_jobs",
            "interval": every,
            "expire_seconds": 50,
            "description": "Re-send jobs whose worker stopped responding, and lost pending jobs.",
        },
    )


def remove(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(
        name="Reap stuck jobs"
    ).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("jobs", "0001_initial"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(create, remove)]
