"""Parse `nvidia-smi --query-gpu=... --format=csv[,nounits] -l N` logs into samples per GPU.

What nvidia-smi writes, and what we accept:

- a header naming the queried fields, in the order asked, with units unless `noheader`:
  `timestamp, name, index, utilization.gpu [%], memory.used [MiB], power.draw [W]`. Any order
  is read; timestamp, utilization.gpu and memory.used are required, the rest optional;
- values with units (`45 %`, `1024 MiB`, `70.50 W`) or bare with `nounits`; memory in MiB
  unless the header or value says otherwise;
- `[N/A]`, `[Not Supported]`, `[Unknown Error]` and the like (any bracketed word) for a value
  the GPU did not report: kept as missing, the rest of the row still counts;
- one row per GPU per interval, GPUs interleaved, told apart by `index` (uuid or pci.bus_id when
  index was not queried; one GPU when none is);
- timestamps `2024/01/15 10:00:00.123` (nvidia-smi's own format; `-` and `T` separators too).

A repeated header (two logs concatenated) is skipped; a row that cannot be read is skipped and
counted, not fatal.
"""

import codecs
import csv
import math
import re
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

from jobs.domain.traces.errors import TraceError
from jobs.domain.traces.sources import Readable

MAX_LINE_CHARS = 64 * 1024
_CHUNK_BYTES = 1 << 16
_REQUIRED = ("timestamp", "utilization.gpu", "memory.used")
_GPU_KEYS = ("index", "uuid", "pci.bus_id")
_MEMORY_UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}
_DEFAULT_MEMORY_UNIT = "MiB"
_HEADER_FIELD = re.compile(r"^\s*([\w.]+)\s*(?:\[([^\]]*)\])?\s*$")
_TIMESTAMP = re.compile(
    r"^\s*(\d{4})[/-](\d{1,2})[/-](\d{1,2})[ T](\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?"
)


@dataclass
class GpuSamples:
    """One GPU's samples in file order; NaN where the GPU reported no value."""

    key: str
    name: str | None = None
    memory_total_bytes: int | None = None
    time_s: array = field(default_factory=lambda: array("d"))
    utilization_pct: array = field(default_factory=lambda: array("d"))
    memory_utilization_pct: array = field(default_factory=lambda: array("d"))
    memory_used_bytes: array = field(default_factory=lambda: array("d"))
    power_w: array = field(default_factory=lambda: array("d"))


@dataclass
class NvidiaSmiLog:
    gpus: list[GpuSamples]
    skipped_rows: int


def parse_nvidia_smi(reader: Readable, *, label: str) -> NvidiaSmiLog:
    lines = _lines(reader, label)
    header_line = next(lines, "")
    columns = _columns(header_line, label)
    gpus: dict[str, GpuSamples] = {}
    skipped = 0
    for line in lines:
        if not line.strip() or line.strip() == header_line.strip():
            continue
        values = next(csv.reader([line], skipinitialspace=True), [])
        if len(values) != len(columns.names) or not columns.add(values, gpus):
            skipped += 1
    if not gpus:
        raise TraceError(f"{label}: an nvidia-smi log with no readable samples")
    return NvidiaSmiLog(gpus=list(gpus.values()), skipped_rows=skipped)


class _Columns:
    """Where each field sits in a row, and the units the header declares."""

    def __init__(self, names: list[str], units: list[str | None]) -> None:
        self.names = names
        self._at = {name: position for position, name in enumerate(names)}
        self._units = dict(zip(names, units, strict=True))
        self._gpu_key = next((self._at[key] for key in _GPU_KEYS if key in self._at), None)

    def add(self, values: list[str], gpus: dict[str, GpuSamples]) -> bool:
        """File one row under its GPU; False when the row cannot be read."""
        time_s = _seconds(values[self._at["timestamp"]])
        if time_s is None:
            return False
        key = values[self._gpu_key].strip() if self._gpu_key is not None else "0"
        gpu = gpus.get(key)
        if gpu is None:
            gpu = gpus[key] = GpuSamples(key=key)
        name = self._text(values, "name")
        if name is not None:
            gpu.name = name
        total = self._bytes(values, "memory.total")
        if not math.isnan(total):
            gpu.memory_total_bytes = int(total)
        gpu.time_s.append(time_s)
        gpu.utilization_pct.append(self._number(values, "utilization.gpu"))
        gpu.memory_utilization_pct.append(self._number(values, "utilization.memory"))
        gpu.memory_used_bytes.append(self._bytes(values, "memory.used"))
        gpu.power_w.append(self._number(values, "power.draw"))
        return True

    def _text(self, values: list[str], name: str) -> str | None:
        position = self._at.get(name)
        if position is None:
            return None
        text = values[position].strip()
        return None if _missing(text) else text

    def _number(self, values: list[str], name: str) -> float:
        text = self._text(values, name)
        if text is None:
            return math.nan
        try:
            number = float(text.split()[0])
        except (ValueError, IndexError):
            return math.nan
        return number if math.isfinite(number) else math.nan

    def _bytes(self, values: list[str], name: str) -> float:
        text = self._text(values, name)
        number = self._number(values, name)
        if text is None or math.isnan(number):
            return math.nan
        parts = text.split()
        unit = parts[1] if len(parts) > 1 else (self._units.get(name) or _DEFAULT_MEMORY_UNIT)
        scale = _MEMORY_UNITS.get(unit)
        return number * scale if scale is not None else math.nan


def _columns(header_line: str, label: str) -> _Columns:
    fields = next(csv.reader([header_line], skipinitialspace=True), [])
    names: list[str] = []
    units: list[str | None] = []
    for text in fields:
        match = _HEADER_FIELD.match(text)
        names.append(match.group(1) if match else text.strip())
        units.append(match.group(2) if match else None)
    missing = [name for name in _REQUIRED if name not in names]
    if missing:
        raise TraceError(
            f"{label}: an nvidia-smi log without {', '.join(missing)}; log with "
            "nvidia-smi --query-gpu=timestamp,name,index,utilization.gpu,utilization.memory,"
            "memory.used,memory.total,power.draw --format=csv -l 1"
        )
    return _Columns(names, units)


def _missing(text: str) -> bool:
    return not text or text.startswith("[") or text.upper() == "N/A"


def _seconds(text: str) -> float | None:
    """Seconds since the epoch, reading the wall-clock time as UTC (only differences matter)."""
    match = _TIMESTAMP.match(text)
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction = match.groups()
    try:
        moment = datetime(
            int(year), int(month), int(day), int(hour), int(minute), int(second), tzinfo=UTC
        )
    except ValueError:
        return None
    return moment.timestamp() + (float(f"0.{fraction}") if fraction else 0.0)


def _lines(reader: Readable, label: str) -> Iterator[str]:
    """Decoded lines without their line ending; TraceError for a line past MAX_LINE_CHARS,
    which no nvidia-smi log has and which would otherwise be buffered whole."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pending = ""
    while True:
        chunk = reader.read(_CHUNK_BYTES)
        pending += decoder.decode(chunk, final=not chunk)
        *complete, pending = pending.split("\n")
        for line in complete:
            yield line.rstrip("\r")
        if len(pending) > MAX_LINE_CHARS:
            raise TraceError(
                f"{label}: a line longer than {MAX_LINE_CHARS} characters; not an nvidia-smi log"
            )
        if not chunk:
            break
    if pending:
        yield pending.rstrip("\r")
