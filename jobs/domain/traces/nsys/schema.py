"""Which Nsight Systems export layout a database has: tables and columns are probed, not assumed.

nsys writes only the tables it has rows for, and its schema has moved between releases: GPU
identity is TARGET_INFO_GPU (id, name, totalMemory, computeMajor, smCount, ...) since about
2021.2 and TARGET_INFO_CUDA_GPU (deviceId-keyed, computeCapabilityMajor, numMultiprocessors,
...) before it; kernel names are StringIds references (demangledName, shortName, mangledName);
memcpy source/destination memory kinds and the memset memory kind came later than bytes and
copyKind. Anything we rely on is checked here, once, so the reader can query without guessing.
"""

from dataclasses import dataclass
from typing import Any

from jobs.domain.traces.errors import TraceError
from jobs.domain.traces.nsys.sqlite_guard import ReadOnlyDatabase

KERNEL_TABLE = "CUPTI_ACTIVITY_KIND_KERNEL"
MEMCPY_TABLE = "CUPTI_ACTIVITY_KIND_MEMCPY"
MEMSET_TABLE = "CUPTI_ACTIVITY_KIND_MEMSET"
STRINGS_TABLE = "StringIds"
_GPU_TABLES = ("TARGET_INFO_GPU", "TARGET_INFO_CUDA_GPU")

_ACTIVITY_COLUMNS = ("start", "end", "deviceId", "streamId")
# demangledName first: it is the name the PyTorch profiler shows for the same kernel.
_KERNEL_NAME_COLUMNS = ("demangledName", "shortName", "mangledName")
_GPU_ID_COLUMNS = ("id", "deviceId")
# Kineto's deviceProperties key <- the export's column, newer spelling first.
_PROPERTY_COLUMNS: dict[str, tuple[str, ...]] = {
    "name": ("name",),
    "totalGlobalMem": ("totalMemory", "totalGlobalMem", "globalMemorySize"),
    "computeMajor": ("computeMajor", "computeCapabilityMajor"),
    "computeMinor": ("computeMinor", "computeCapabilityMinor"),
    "numSms": ("smCount", "numMultiprocessors"),
    "warpSize": ("threadsPerWarp", "numThreadsPerWarp"),
    "maxThreadsPerBlock": ("maxThreadsPerBlock",),
    "regsPerBlock": ("maxRegistersPerBlock",),
    "regsPerMultiprocessor": ("maxRegistersPerSm",),
    "sharedMemPerBlock": ("maxShmemPerBlock",),
    "sharedMemPerMultiprocessor": ("maxShmemPerSm",),
    "sharedMemPerBlockOptin": ("maxShmemPerBlockOptin",),
}


@dataclass(frozen=True)
class ExportLayout:
    kernel_name_column: str | None  # None: no kernel table
    has_memcpy: bool
    memcpy_memory_kinds: bool  # srcKind and dstKind present
    has_memset: bool
    memset_memory_kind: bool  # memKind present
    gpu_table: str | None
    gpu_columns: frozenset[str]


def probe_layout(db: ReadOnlyDatabase, label: str) -> ExportLayout:
    """Check the tables we read; TraceError when this is not an nsys export we can read."""
    has_kernels = db.require_table(KERNEL_TABLE)
    has_memcpy = db.require_table(MEMCPY_TABLE)
    has_memset = db.require_table(MEMSET_TABLE)
    has_strings = db.require_table(STRINGS_TABLE)
    gpu_table = next((table for table in _GPU_TABLES if db.require_table(table)), None)
    if not (has_kernels or has_memcpy or has_memset or has_strings or gpu_table):
        raise TraceError(
            f"{label}: this is an SQLite database but not an Nsight Systems export (it has none "
            "of the tables nsys export --type sqlite writes)"
        )
    name_column = None
    if has_kernels:
        kernel_columns = _require(db, KERNEL_TABLE, _ACTIVITY_COLUMNS, label)
        name_column = next((c for c in _KERNEL_NAME_COLUMNS if c in kernel_columns), None)
        if name_column is None or not has_strings:
            missing = "a kernel name column" if name_column is None else "a StringIds table"
            raise _unsupported(label, f"{KERNEL_TABLE} without {missing}")
    memcpy_columns = (
        _require(db, MEMCPY_TABLE, (*_ACTIVITY_COLUMNS, "bytes", "copyKind"), label)
        if has_memcpy
        else set()
    )
    memset_columns = (
        _require(db, MEMSET_TABLE, (*_ACTIVITY_COLUMNS, "bytes"), label) if has_memset else set()
    )
    if not (has_kernels or has_memcpy or has_memset):
        raise no_cuda_activity(label)
    return ExportLayout(
        kernel_name_column=name_column,
        has_memcpy=has_memcpy,
        memcpy_memory_kinds={"srcKind", "dstKind"} <= memcpy_columns,
        has_memset=has_memset,
        memset_memory_kind="memKind" in memset_columns,
        gpu_table=gpu_table,
        gpu_columns=frozenset(db.columns(gpu_table)) if gpu_table else frozenset(),
    )


def device_properties(db: ReadOnlyDatabase, layout: ExportLayout) -> dict[int, dict[str, Any]]:
    """Per device id, its properties under Kineto's deviceProperties names (first row wins when
    a multi-node export lists a device id twice)."""
    columns = layout.gpu_columns
    id_column = next((c for c in _GPU_ID_COLUMNS if c in columns), None)
    if layout.gpu_table is None or id_column is None:
        return {}
    selected = {
        key: next(c for c in candidates if c in columns)
        for key, candidates in _PROPERTY_COLUMNS.items()
        if any(c in columns for c in candidates)
    }
    column_list = ", ".join([id_column, *selected.values()])
    found: dict[int, dict[str, Any]] = {}
    for row in db.rows(f"SELECT {column_list} FROM {layout.gpu_table}"):
        device, values = row[0], row[1:]
        if isinstance(device, int) and device not in found:
            properties: dict[str, Any] = {"id": device}
            properties.update(
                (key, value)
                for key, value in zip(selected, values, strict=True)
                if isinstance(value, int | float | str)
            )
            found[device] = properties
    return found


def no_cuda_activity(label: str) -> TraceError:
    return TraceError(
        f"{label}: the Nsight Systems export has no CUDA kernels or memory copies; was it "
        "captured with CUDA tracing on (nsys profile --trace=cuda)?"
    )


def _require(db: ReadOnlyDatabase, table: str, needed: tuple[str, ...], label: str) -> set[str]:
    columns = db.columns(table)
    missing = [column for column in needed if column not in columns]
    if missing:
        raise _unsupported(label, f"{table} has no {', '.join(missing)} column")
    return columns


def _unsupported(label: str, detail: str) -> TraceError:
    return TraceError(
        f"{label}: this is an SQLite database: Nsight Systems exports are not supported yet in "
        f"this layout ({detail}); export the report again with a current "
        "nsys export --type sqlite"
    )
