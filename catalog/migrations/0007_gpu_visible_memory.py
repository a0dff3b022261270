from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0006_catalogue_version"),
    ]

    operations = [
        migrations.AddField(
            model_name="gpu",
            name="visible_memory_mib",
            field=models.PositiveIntegerField(
                blank=True,
                help_text="nvidia-smi's total on a real card (MiB); empty when unpublished.",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="gpu",
            name="visible_memory_source_url",
            field=models.URLField(blank=True, max_length=500),
        ),
    ]
