"""Reserved 1-year and 3-year prices as their own pricing models ("reserved_1y" is 11 characters:
the column widens), and the check constraint names them.

SQLite rebuilds a table to alter a column or a constraint, and the rebuild drops the table's
triggers: the catalogue version triggers of 0006 are put back afterwards (either direction),
on every catalogue table, as 0006 writes them.
"""

from importlib import import_module

from django.db import migrations, models

version = import_module("catalog.migrations.0006_catalogue_version")


def sqlite_version_triggers_restore(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "sqlite":
        return
    for table in version._tables(apps):
        for event in ("INSERT", "UPDATE", "DELETE"):
            schema_editor.execute(
                f'CREATE TRIGGER IF NOT EXISTS "{table}_version_{event.lower()}" AFTER {event} '
                f'ON "{table}" BEGIN INSERT OR REPLACE INTO {version.VERSION_TABLE} (id, token) '
                "VALUES (1, random()); END"
            )


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0010_price_edit_reason"),
    ]

    operations = [
        # Undone last when migrating backwards: the rebuilt table gets its triggers back.
        migrations.RunPython(migrations.RunPython.noop, sqlite_version_triggers_restore),
        migrations.RemoveConstraint(
            model_name="offer",
            name="offer_pricing_model_valid",
        ),
        migrations.AlterField(
            model_name="offer",
            name="pricing_model",
            field=models.CharField(
                choices=[
                    ("on_demand", "on-demand"),
                    ("spot", "spot"),
                    ("reserved_1y", "reserved 1 year"),
                    ("reserved_3y", "reserved 3 years"),
                ],
                max_length=20,
            ),
        ),
        migrations.AddConstraint(
            model_name="offer",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("pricing_model__in", ["on_demand", "spot", "reserved_1y", "reserved_3y"])
                ),
                name="offer_pricing_model_valid",
            ),
        ),
        migrations.RunPython(sqlite_version_triggers_restore, migrations.RunPython.noop),
    ]
