"""Read an uploaded SQLite file as untrusted input: read-only, time-bounded, no side doors.

An upload can be any database its author cared to build: views posing as tables, queries that
never end, a WAL file we never see, corrupt pages. So:

- it is opened with the URI `mode=ro&immutable=1`: no locks, no journal, no writes, nothing next
  to the file consulted. Immutable also means a write-ahead log is ignored, so a WAL-mode file is
  refused (its header says so; PRAGMA journal_mode cannot, it reports "delete" when immutable):
  without its -wal file it would read as empty or stale;
- `PRAGMA trusted_schema=OFF`, so views and triggers cannot call functions with side effects;
- an authorizer allows reading and nothing else (no ATTACH, no writes, no pragma but
  table_info, no function but a few aggregates), ATTACH is also limited to zero databases, and
  extension loading stays off;
- no single value may exceed MAX_VALUE_BYTES, so one giant string cannot fill memory;
- every query runs under a deadline: a progress handler aborts it after `query_limit_ms`.
  Recursive queries are allowed; the deadline is what stops an endless one;
- callers read only objects that `require_table` found to be real tables, never views.
"""

import math
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

from jobs.domain.traces.errors import TraceError

# Generous for a multi-gigabyte export read in full, and well under the job's time limit, so a
# hostile query fails with a message instead of the whole job timing out.
DEFAULT_QUERY_LIMIT_MS = 60_000
# How often (in SQLite virtual-machine instructions) the deadline is checked: about every
# millisecond on a current CPU, at negligible cost.
_PROGRESS_EVERY_INSTRUCTIONS = 10_000
_FETCH_ROWS = 10_000
# Far above any kernel name (long C++ template names run to tens of kilobytes).
MAX_VALUE_BYTES = 16 * 2**20
# Bytes 18 and 19 of the header are the file format's write and read versions: both 2 in WAL mode.
_WAL_VERSIONS = b"\x02\x02"
_HEADER_BYTES = 100
_ALLOWED_ACTIONS = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE})
_ALLOWED_FUNCTIONS = frozenset({"count", "min", "max", "sum", "total"})


class ReadOnlyDatabase:
    """A guarded connection to one uploaded SQLite file; use it as a context manager."""

    def __init__(self, path: Path, *, label: str, query_limit_ms: int) -> None:
        self._label = label
        self._limit_ms = query_limit_ms
        self._deadline = math.inf
        self._timed_out = False
        _refuse_wal(path, label)
        uri = path.resolve().as_uri() + "?mode=ro&immutable=1"
        try:
            self._connection = sqlite3.connect(uri, uri=True, isolation_level=None)
        except sqlite3.Error as exc:
            raise TraceError(f"{label}: the SQLite database cannot be opened ({exc})") from None
        try:
            self._object_types = self._lock_down()
        except BaseException:
            self._connection.close()
            raise

    def __enter__(self) -> "ReadOnlyDatabase":
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._connection.close()

    def require_table(self, name: str) -> bool:
        """True for a real table, False when absent; TraceError for a view or anything else
        posing under the name."""
        kind = self._object_types.get(name)
        if kind is None:
            return False
        if kind != "table":
            raise TraceError(
                f"{self._label}: {name} is a {kind}, not a table: this is not a database "
                "as nsys export writes it"
            )
        return True

    def columns(self, table: str) -> set[str]:
        """The column names of a table that require_table accepted."""
        quoted = '"' + table.replace('"', '""') + '"'
        return {str(row[1]) for row in self.rows(f"PRAGMA table_info({quoted})")}

    def rows(self, sql: str, parameters: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
        """Run one query under the deadline and yield its rows; errors become TraceError."""
        self._deadline = time.monotonic() + self._limit_ms / 1000
        try:
            cursor = self._connection.execute(sql, parameters)
            while batch := cursor.fetchmany(_FETCH_ROWS):
                yield from batch
        except sqlite3.Error as exc:
            raise self._as_trace_error(exc) from None
        finally:
            self._deadline = math.inf

    def _lock_down(self) -> dict[str, str]:
        """Apply the guards, then list the schema's objects: name -> type."""
        connection = self._connection
        # Python builds without extension support lack the method; those cannot load any.
        if hasattr(connection, "enable_load_extension"):
            connection.enable_load_extension(False)
        connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
        connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
        connection.set_progress_handler(self._past_deadline, _PROGRESS_EVERY_INSTRUCTIONS)
        for _ in self.rows("PRAGMA trusted_schema=OFF"):
            pass
        connection.set_authorizer(_authorize)
        return {
            name: kind
            for kind, name in self.rows("SELECT type, name FROM sqlite_master")
            if isinstance(name, str) and isinstance(kind, str)
        }

    def _past_deadline(self) -> int:
        if time.monotonic() > self._deadline:
            self._timed_out = True
            return 1
        return 0

    def _as_trace_error(self, exc: sqlite3.Error) -> TraceError:
        if self._timed_out:
            return TraceError(
                f"{self._label}: a query on the SQLite database ran past its "
                f"{self._limit_ms / 1000:g} s limit and was stopped; is this a genuine "
                "Nsight Systems export?"
            )
        if isinstance(exc, sqlite3.DataError):  # SQLITE_TOOBIG: over SQLITE_LIMIT_LENGTH
            return TraceError(
                f"{self._label}: a value in the SQLite database is over "
                f"{MAX_VALUE_BYTES // 2**20} MiB; no Nsight Systems export holds one"
            )
        if "not authorized" in str(exc):
            return TraceError(
                f"{self._label}: the SQLite database asks for more than reading ({exc}); refused"
            )
        return TraceError(f"{self._label}: the SQLite database is damaged or unreadable ({exc})")


def _refuse_wal(path: Path, label: str) -> None:
    with path.open("rb") as file:
        header = file.read(_HEADER_BYTES)
    sidecar = path.with_name(path.name + "-wal")
    if header[18:20] == _WAL_VERSIONS or sidecar.exists():
        raise TraceError(
            f"{label}: the export is incomplete: the database is in WAL mode, so its latest "
            "writes sit in a separate -wal file that is not read. Run "
            "`sqlite3 FILE 'PRAGMA journal_mode=DELETE'` next to its -wal file, or export again "
            "with nsys export --type sqlite"
        )


def _authorize(action: int, arg1: str | None, arg2: str | None, *_: str | None) -> int:
    allowed = (
        action in _ALLOWED_ACTIONS
        or (action == sqlite3.SQLITE_PRAGMA and arg1 == "table_info")
        or (action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in _ALLOWED_FUNCTIONS)
    )
    return sqlite3.SQLITE_OK if allowed else sqlite3.SQLITE_DENY
