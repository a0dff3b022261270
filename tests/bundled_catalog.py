"""The bundled catalogue, loaded once per test run and copied back for each test that asks.

`catalog_load_bundled()` parses, matches and validates ~10,700 quotes and writes them through
the ORM: about 3 s, and a hundred-odd tests want the real catalogue. The first load is the
real one; its rows are then kept as PostgreSQL COPY text and every later test gets the same
rows back with COPY (tens of milliseconds) and its sequences moved past them, inside the
test's own transaction, so the test still rolls back to an empty catalogue. On SQLite, or when
a test has already written catalogue rows, the real load runs every time.
"""

from dataclasses import dataclass

from django.apps import apps
from django.db import connection

from catalog.models import CatalogueVersion
from catalog.services import CatalogLoadReport, catalog_load_bundled


@dataclass
class _Snapshot:
    report: CatalogLoadReport
    tables: dict[str, bytes]


_snapshot: _Snapshot | None = None


def _referenced_first(models: list) -> list:
    """The models ordered so that every table a foreign key points at is copied before the
    table that points at it: outside a transaction each COPY is checked when it ends."""
    ordered: list = []

    def visit(model) -> None:
        if model in ordered:
            return
        for field in model._meta.concrete_fields:
            target = field.related_model if field.is_relation else None
            if target in models and target is not model:
                visit(target)
        ordered.append(model)

    for model in models:
        visit(model)
    return ordered


def _catalog_tables() -> list[str]:
    tables = []
    models = [m for m in apps.get_app_config("catalog").get_models() if m is not CatalogueVersion]
    # CatalogueVersion is not content: the triggers set it as the rows are copied in.
    for model in _referenced_first(models):
        tables.append(model._meta.db_table)
        tables.extend(
            field.remote_field.through._meta.db_table for field in model._meta.local_many_to_many
        )
    return tables


def _empty(tables: list[str]) -> bool:
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute(f'SELECT EXISTS (SELECT 1 FROM "{table}")')
            if cursor.fetchone()[0]:
                return False
    return True


def _copy_out(tables: list[str]) -> dict[str, bytes]:
    copied = {}
    with connection.cursor() as cursor:
        for table in tables:
            with cursor.connection.cursor().copy(f'COPY "{table}" TO STDOUT') as copy:
                copied[table] = b"".join(bytes(chunk) for chunk in copy)
    return copied


def _copy_in(tables: dict[str, bytes]) -> None:
    with connection.cursor() as cursor:
        raw = cursor.connection.cursor()
        for table, data in tables.items():
            with raw.copy(f'COPY "{table}" FROM STDIN') as copy:
                copy.write(data)
            cursor.execute(
                "SELECT setval(pg_get_serial_sequence(%s, 'id'), COALESCE(MAX(id), 1), "
                f'MAX(id) IS NOT NULL) FROM "{table}"',
                [f'"{table}"'],
            )


def bundled_catalog_load() -> CatalogLoadReport:
    """The bundled catalogue in the test database, as `make run` loads it."""
    global _snapshot
    tables = _catalog_tables()
    if connection.vendor != "postgresql" or not _empty(tables):
        return catalog_load_bundled()
    if _snapshot is None:
        report = catalog_load_bundled()
        _snapshot = _Snapshot(report=report, tables=_copy_out(tables))
        return report
    _copy_in(_snapshot.tables)
    return _snapshot.report
