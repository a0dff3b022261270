"""The catalogue version: one row, its token changed by triggers on every write to the tables
the advisor and the GPU list read (GPUs, MIG profiles, providers, offers).

PostgreSQL: a BEFORE ... FOR EACH STATEMENT trigger (also on TRUNCATE) sets the token to the
next value of a sequence. nextval() is never rolled back, so a write undone by a rollback (or
a rolled-back savepoint, as in a test) can never leave a token that a later, different
catalogue reuses. BEFORE, so a writer takes the version row's lock before any catalogue
row's: two writers queue on it instead of deadlocking on each other's offer rows.

SQLite (row triggers only; one writer at a time anyway): a random 64-bit token per row written.

Any other database gets no row and no trigger: readers then find no token and cache nothing.
"""

from django.db import migrations, models

TABLES = ["Gpu", "MigProfile", "Provider", "Offer"]
VERSION_TABLE = "catalog_catalogueversion"
PG_FUNCTION = "catalog_catalogue_version_bump"
PG_SEQUENCE = "catalog_catalogue_version_seq"

PG_CREATE_FUNCTION = f"""
CREATE FUNCTION {PG_FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {VERSION_TABLE} (id, token) VALUES (1, nextval('{PG_SEQUENCE}'))
    ON CONFLICT (id) DO UPDATE SET token = EXCLUDED.token;
    RETURN NULL;
END
$$
"""


def _tables(apps) -> list[str]:
    return [apps.get_model("catalog", name)._meta.db_table for name in TABLES]


def install(apps, schema_editor) -> None:
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(f"CREATE SEQUENCE {PG_SEQUENCE}")
        schema_editor.execute(PG_CREATE_FUNCTION)
        for table in _tables(apps):
            schema_editor.execute(
                f'CREATE TRIGGER "{table}_version" BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE '
                f'ON "{table}" FOR EACH STATEMENT EXECUTE FUNCTION {PG_FUNCTION}()'
            )
        schema_editor.execute(
            f"INSERT INTO {VERSION_TABLE} (id, token) VALUES (1, nextval('{PG_SEQUENCE}'))"
        )
    elif vendor == "sqlite":
        for table in _tables(apps):
            for event in ("INSERT", "UPDATE", "DELETE"):
                schema_editor.execute(
                    f'CREATE TRIGGER "{table}_version_{event.lower()}" AFTER {event} ON "{table}" '
                    f"BEGIN INSERT OR REPLACE INTO {VERSION_TABLE} (id, token) "
                    "VALUES (1, random()); END"
                )
        schema_editor.execute(f"INSERT INTO {VERSION_TABLE} (id, token) VALUES (1, random())")


def uninstall(apps, schema_editor) -> None:
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        for table in _tables(apps):
            schema_editor.execute(f'DROP TRIGGER IF EXISTS "{table}_version" ON "{table}"')
        schema_editor.execute(f"DROP FUNCTION IF EXISTS {PG_FUNCTION}()")
        schema_editor.execute(f"DROP SEQUENCE IF EXISTS {PG_SEQUENCE}")
    elif vendor == "sqlite":
        for table in _tables(apps):
            for event in ("insert", "update", "delete"):
                schema_editor.execute(f'DROP TRIGGER IF EXISTS "{table}_version_{event}"')


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0005_mig_profiles"),
    ]

    operations = [
        migrations.CreateModel(
            name="CatalogueVersion",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("token", models.BigIntegerField()),
            ],
        ),
        migrations.RunPython(install, uninstall),
    ]
