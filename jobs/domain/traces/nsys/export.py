"""Nsight Systems SQLite exports (nsys export --type sqlite): one RankSummary per GPU.

Kernels, memcpy and memset rows become the same GPU events a Kineto trace yields, named the way
Kineto names them ("Memcpy HtoD (Pageable -> Device)", "Memset (Device)", the kernel's demangled
name), so the same kernel-type rules, breakdown, top kernels and copy sums apply (`metrics`).
There are no ProfilerSteps here, so nothing is dropped: the window runs from each GPU's first to
its last event. The database is untrusted and read through `sqlite_guard`.
"""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jobs.domain.traces.metrics import gpus_present, work_metrics
from jobs.domain.traces.nsys.schema import (
    KERNEL_TABLE,
    MEMCPY_TABLE,
    MEMSET_TABLE,
    STRINGS_TABLE,
    ExportLayout,
    device_properties,
    no_cuda_activity,
    probe_layout,
)
from jobs.domain.traces.nsys.sqlite_guard import DEFAULT_QUERY_LIMIT_MS, ReadOnlyDatabase
from jobs.domain.traces.summary import RankSummary
from jobs.domain.traces.work import GpuWork

# CUpti_ActivityMemcpyKind, which nsys stores as copyKind; 11 and 12 are nsys's unified-memory
# migrations.
_COPY_KINDS = {
    1: "HtoD",
    2: "DtoH",
    3: "HtoA",
    4: "AtoH",
    5: "AtoA",
    6: "AtoD",
    7: "DtoA",
    8: "DtoD",
    9: "HtoH",
    10: "PtoP",
    11: "HtoD",
    12: "DtoH",
}
_UNIFIED_COPY_KINDS = frozenset({11, 12})
# nsys's CUDA_MEMOPR_MEMORY_KIND, in the words Kineto uses for the same memory.
_MEMORY_KINDS = {
    0: "Pageable",
    1: "Pinned",
    2: "Device",
    3: "Array",
    4: "Managed",
    5: "Device Static",
    6: "Managed Static",
}
_NS_PER_US = 1000


def summarize_nsys(
    path: Path,
    *,
    label: str,
    warnings: list[str],
    query_limit_ms: int = DEFAULT_QUERY_LIMIT_MS,
) -> list[RankSummary]:
    """Read one export; TraceError for anything that is not a readable nsys export."""
    with ReadOnlyDatabase(path, label=label, query_limit_ms=query_limit_ms) as db:
        layout = probe_layout(db, label)
        names = _Names()
        events = _Events()
        _read_kernels(db, layout, names, events)
        _read_memcpy(db, layout, names, events)
        _read_memset(db, layout, names, events)
        names.resolve(db, layout)
        properties = device_properties(db, layout)
    if events.skipped:
        warnings.append(f"{label}: {events.skipped} rows skipped: start or end not a time")
    per_device = events.by_device()
    if not per_device:
        raise no_cuda_activity(label)
    if not properties:
        warnings.append(f"{label}: the export names no GPU (no TARGET_INFO_GPU table)")
    listed = [properties[device] for device in sorted(properties)]
    return [
        _rank(label, device, work, names.names, listed=listed, warnings=warnings)
        for device, work in per_device
    ]


def _rank(
    label: str,
    device: int,
    work: GpuWork,
    names: list[str],
    *,
    listed: list[dict[str, Any]],
    warnings: list[str],
) -> RankSummary:
    """One GPU's summary; `listed` is every GPU of the export (TARGET_INFO_GPU), so a GPU
    that ran nothing is still on record as present."""
    properties = next((p for p in listed if p.get("id") == device), {"id": device})
    name = properties.get("name")
    return RankSummary(
        rank=device,
        world_size=None,
        file=label,
        gpu_name=name if isinstance(name, str) else None,
        device_properties=properties,
        peak_allocated_bytes=None,
        peak_reserved_bytes=None,
        profiler_steps=0,
        gpu_event_count=len(work),
        cpu_only=False,
        ns_rounding_used=False,
        source="nsys",
        gpus_present=gpus_present(listed, work, names, label=label, warnings=warnings),
        **work_metrics(work, names, label=f"{label} (GPU {device})", warnings=warnings),
    )


class _Names:
    """Event names, interned: kernel names stay StringIds references until `resolve`."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self._ids: dict[object, int] = {}
        self._refs: dict[int, int] = {}  # StringIds id -> our name id

    def of_text(self, text: str) -> int:
        return self._intern(("text", text), text)

    def of_reference(self, reference: Any) -> int:
        name_id = self._intern(("ref", reference), f"kernel with unknown name ({reference})")
        if isinstance(reference, int):
            self._refs[reference] = name_id
        return name_id

    def resolve(self, db: ReadOnlyDatabase, layout: ExportLayout) -> None:
        if layout.kernel_name_column is None:
            return
        used = f"SELECT DISTINCT {layout.kernel_name_column} FROM {KERNEL_TABLE}"
        query = f"SELECT id, value FROM {STRINGS_TABLE} WHERE id IN ({used})"
        for reference, value in db.rows(query):
            name_id = self._refs.get(reference)
            if name_id is not None and isinstance(value, str):
                self.names[name_id] = value

    def _intern(self, key: object, name: str) -> int:
        name_id = self._ids.get(key)
        if name_id is None:
            name_id = self._ids[key] = len(self.names)
            self.names.append(name)
        return name_id


@dataclass
class _DeviceEvents:
    start_ns: list[int] = field(default_factory=list)
    end_ns: list[int] = field(default_factory=list)
    name_id: list[int] = field(default_factory=list)
    stream: list[int] = field(default_factory=list)
    nbytes: list[int] = field(default_factory=list)


class _Events:
    def __init__(self) -> None:
        self._devices: dict[int, _DeviceEvents] = {}
        self.skipped = 0

    def add(self, row: tuple[Any, ...], name_id: int, nbytes: Any = 0) -> None:
        start, end, device, stream = row[:4]
        if type(start) is not int or type(end) is not int or end < start:
            self.skipped += 1
            return
        events = self._devices.setdefault(device if type(device) is int else -1, _DeviceEvents())
        events.start_ns.append(start)
        events.end_ns.append(end)
        events.name_id.append(name_id)
        events.stream.append(stream if type(stream) is int else -1)
        events.nbytes.append(nbytes if type(nbytes) is int and nbytes > 0 else 0)

    def by_device(self) -> list[tuple[int, GpuWork]]:
        """GpuWork per device, times in microseconds from the export's first event (differences
        of integer nanoseconds, so no precision is lost to large timestamps)."""
        if not self._devices:
            return []
        base_ns = min(min(events.start_ns) for events in self._devices.values())
        return [
            (device, _work(events, base_ns, device))
            for device, events in sorted(self._devices.items())
        ]


def _work(events: _DeviceEvents, base_ns: int, device: int) -> GpuWork:
    return GpuWork(
        start_us=[(start - base_ns) / _NS_PER_US for start in events.start_ns],
        end_us=[(end - base_ns) / _NS_PER_US for end in events.end_ns],
        name_id=events.name_id,
        stream=events.stream,
        device=[device] * len(events.start_ns),
        nbytes=events.nbytes,
        last_step_dropped=False,
        dropped_count=0,
        rounded=False,
        time_base_us=base_ns / _NS_PER_US,
    )


_ACTIVITY = "start, end, deviceId, streamId"


def _read_kernels(
    db: ReadOnlyDatabase, layout: ExportLayout, names: _Names, events: _Events
) -> None:
    if layout.kernel_name_column is None:
        return
    query = f"SELECT {_ACTIVITY}, {layout.kernel_name_column} FROM {KERNEL_TABLE}"
    for row in db.rows(query):
        events.add(row, names.of_reference(row[4]))


def _read_memcpy(
    db: ReadOnlyDatabase, layout: ExportLayout, names: _Names, events: _Events
) -> None:
    if not layout.has_memcpy:
        return
    kinds = "srcKind, dstKind" if layout.memcpy_memory_kinds else "NULL, NULL"
    query = f"SELECT {_ACTIVITY}, bytes, copyKind, {kinds} FROM {MEMCPY_TABLE}"
    for row in db.rows(query):
        nbytes, copy_kind, source, destination = row[4:]
        events.add(row, names.of_text(_memcpy_name(copy_kind, source, destination)), nbytes)


def _read_memset(
    db: ReadOnlyDatabase, layout: ExportLayout, names: _Names, events: _Events
) -> None:
    if not layout.has_memset:
        return
    kind = "memKind" if layout.memset_memory_kind else "NULL"
    for row in db.rows(f"SELECT {_ACTIVITY}, bytes, {kind} FROM {MEMSET_TABLE}"):
        nbytes, memory_kind = row[4:]
        memory = _MEMORY_KINDS.get(memory_kind, "Device")
        events.add(row, names.of_text(f"Memset ({memory})"), nbytes)


def _memcpy_name(copy_kind: Any, source: Any, destination: Any) -> str:
    """Kineto's spelling: "Memcpy HtoD (Pageable -> Device)"."""
    direction = _COPY_KINDS.get(copy_kind, "Unknown")
    if copy_kind in _UNIFIED_COPY_KINDS:
        return f"Memcpy {direction} (Unified Memory)"
    if source in _MEMORY_KINDS and destination in _MEMORY_KINDS:
        return f"Memcpy {direction} ({_MEMORY_KINDS[source]} -> {_MEMORY_KINDS[destination]})"
    return f"Memcpy {direction}"
