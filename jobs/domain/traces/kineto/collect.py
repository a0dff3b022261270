"""Keep, per trace event, only what the metrics need, in compact arrays.

A trace has hundreds of thousands of events and most are CPU-side noise for our purposes. What
survives parsing:

- GPU events (HTA's definition: `args.stream` present and not -1, whatever the category, so a
  Triton launcher `cpu_op` carrying a stream counts, and a ROCm runtime call's "0x0" does not):
  start, duration, interned name, stream, correlation, device, bytes.
- For CPU-side events with a correlation id (runtime launches): the id and start time, which
  HTA's last-step filter needs to decide which GPU work belongs to the last step.
- ProfilerStep names and the latest start among them, and [memory] high-water marks.
- CPU-side ProfilerStep#N spans (for step times) and the DataLoader's `enumerate(DataLoader)#...`
  spans (time the training loop spent fetching batches, and which iterator fetched them).
"""

import math
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Annotated, Any

import msgspec

# HTA drops rows without `dur` or `cat` (flows, instants, metadata), the whole-trace "Trace"
# span, and python_function events (its default skip list).
_SKIPPED_CATEGORIES = frozenset({"Trace", "python_function"})
# Device-wide synchronisation runs on stream -1 but HTA still files it with the GPU events.
_SYNC_NAMES = frozenset({"Event Sync", "Context Sync"})
_MEMORY_EVENT = "[memory]"
_CPU_DEVICE_TYPE = 0  # c10::DeviceType::CPU; [memory] events on it are host allocations
# torch.utils.data wraps each batch fetch in record_function("enumerate(DataLoader)#<iterator>").
_DATALOADER_PREFIX = "enumerate(DataLoader)#"
# Bounds on what one hostile trace may make us keep; far above what a profiler run writes.
MAX_STEP_SPANS = 100_000

# What a JSON trace event may hold in the fields we read. Anything else (a nested name, a list
# for args, an integer outside the range yajl reads) makes the bulk decoder refuse the run of
# events, and the token walker reads them instead.
_Int64 = Annotated[int, msgspec.Meta(ge=-(2**63) + 1, le=2**63 - 1)]
Scalar = str | _Int64 | float | bool | None


class EventArgs(msgspec.Struct, gc=False):
    """The `args` keys the metrics need; every other key is skipped unread."""

    stream: Scalar = None
    correlation: Scalar = None
    device: Scalar = None
    bytes: Scalar = None
    total_allocated: Scalar = msgspec.field(default=None, name="Total Allocated")
    total_reserved: Scalar = msgspec.field(default=None, name="Total Reserved")
    device_type: Scalar = msgspec.field(default=None, name="Device Type")


class TraceEvent(msgspec.Struct, gc=False):
    """One Chrome-trace event, reduced to the fields the metrics need."""

    name: Scalar = None
    cat: Scalar = None
    ts: Scalar = None
    dur: Scalar = None
    pid: Scalar = None
    args: EventArgs | None = None


# (attribute, JSON name) of each field, for events the token walker builds.
_EVENT_FIELDS = [
    (f.name, f.encode_name) for f in msgspec.structs.fields(TraceEvent) if f.name != "args"
]
_ARG_FIELDS = [(f.name, f.encode_name) for f in msgspec.structs.fields(EventArgs)]
ARG_KEYS = frozenset(json_name for _, json_name in _ARG_FIELDS)


def event_from_scalars(event: dict[str, Any], args: dict[str, Any] | None) -> TraceEvent:
    """A TraceEvent from an event's top-level scalars and its args' scalars (JSON names)."""
    return TraceEvent(
        **{attribute: event.get(json_name) for attribute, json_name in _EVENT_FIELDS},
        args=None
        if args is None
        else EventArgs(**{attribute: args.get(json_name) for attribute, json_name in _ARG_FIELDS}),
    )


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _as_int(value: Any) -> int:
    """HTA's int() coercion: 7, 7.0 and "7" are stream 7; "0x0" and junk are -1.

    Values outside int64 are junk too: the arrays that hold them are 64-bit.
    """
    if type(value) is not int:
        try:
            value = int(value)
        except (TypeError, ValueError, OverflowError):
            return -1
    return value if _INT64_MIN <= value <= _INT64_MAX else -1


@dataclass
class GpuEvents:
    ts_us: array = field(default_factory=lambda: array("d"))
    dur_us: array = field(default_factory=lambda: array("d"))
    name_id: array = field(default_factory=lambda: array("l"))
    stream: array = field(default_factory=lambda: array("q"))
    correlation: array = field(default_factory=lambda: array("q"))
    device: array = field(default_factory=lambda: array("q"))
    nbytes: array = field(default_factory=lambda: array("q"))
    # 1 where HTA's GPUKernelFilter would pick the row (stream >= 0 and correlation >= 0, or a
    # device-wide sync); 0 for other rows carrying a stream, which HTA treats as CPU rows.
    launched: bytearray = field(default_factory=bytearray)

    def __len__(self) -> int:
        return len(self.ts_us)


@dataclass
class EventCollector:
    gpu: GpuEvents = field(default_factory=GpuEvents)
    names: list[str] = field(default_factory=list)
    cpu_correlation: array = field(default_factory=lambda: array("q"))
    cpu_ts_us: array = field(default_factory=lambda: array("d"))
    # Earliest CPU-side row without a correlation id: HTA joins on -1 like any other value.
    uncorrelated_cpu_min_ts_us: float = math.inf
    step_names: set[str] = field(default_factory=set)
    last_step_start_us: float = -math.inf
    # CPU-side ProfilerStep spans: (name, start, duration), start relative to time_base_us.
    step_spans: list[tuple[str, float, float]] = field(default_factory=list)
    # Batch fetches the training loop waited on, by iterator class
    # ("_SingleProcessDataLoaderIter.__next__": num_workers=0, on the main thread).
    dataloader_calls: int = 0
    dataloader_us: float = 0.0
    dataloader_iterators: set[str] = field(default_factory=set)
    peak_allocated_bytes: int | None = None
    peak_reserved_bytes: int | None = None
    event_count: int = 0
    unreadable_count: int = 0
    # HTA rounds only float64 columns, i.e. traces whose JSON has decimal timestamps.
    float_timestamps: bool = False
    # Times are kept relative to the first event's start. Epoch-microsecond timestamps with
    # nanosecond decimals (1712195495519689.047) sit where float64 steps by 0.25 us; adding a
    # duration to them would round again, while the difference of two such timestamps is exact
    # and small, so durations keep their precision (HTA gets the same effect by aligning ranks
    # to their earliest event before it computes ends).
    time_base_us: float | None = None
    _name_ids: dict[str, int] = field(default_factory=dict)

    def add_events(self, events: Iterable[TraceEvent]) -> None:
        """Take trace events in file order. One loop over every event of a trace: the common
        CPU-side event costs a few attribute reads, so the rare cases live in helpers."""
        skipped_categories = _SKIPPED_CATEGORIES
        isfinite = math.isfinite
        cpu_correlation, cpu_ts_us = self.cpu_correlation, self.cpu_ts_us
        count = 0
        for event in events:
            count += 1
            name = event.name
            if name == _MEMORY_EVENT:
                if event.args is not None:
                    self._add_memory(event.args)
                continue
            dur = event.dur
            category = event.cat
            if dur is None or category is None or category in skipped_categories:
                continue
            ts = event.ts
            if type(ts) is float or type(dur) is float:
                self.float_timestamps = True
            try:
                ts = float(ts)  # type: ignore[arg-type]
                dur = float(dur)
            except (TypeError, ValueError):
                self.unreadable_count += 1
                continue
            if not (isfinite(ts) and isfinite(dur)):
                self.unreadable_count += 1
                continue
            if self.time_base_us is None:
                self.time_base_us = ts
            ts -= self.time_base_us
            if type(name) is not str:
                name = "" if name is None else str(name)
            stream = correlation = -1
            args = event.args
            if args is not None:
                if (raw_stream := args.stream) is not None:
                    stream = _as_int(raw_stream)
                if (raw_correlation := args.correlation) is not None:
                    correlation = _as_int(raw_correlation)
            launched = (stream >= 0 and correlation >= 0) or name in _SYNC_NAMES
            if "ProfilerStep" in name:
                self.step_names.add(name)
                if not launched and ts > self.last_step_start_us:
                    self.last_step_start_us = ts
                if stream == -1 and len(self.step_spans) < MAX_STEP_SPANS:
                    self.step_spans.append((name, ts, dur))
            elif stream == -1 and name.startswith(_DATALOADER_PREFIX):
                self._add_dataloader(name, dur)
            if stream != -1:
                self._add_gpu(event, name, ts, dur, stream, correlation, launched)
            if not launched:
                if correlation == -1:
                    if ts < self.uncorrelated_cpu_min_ts_us:
                        self.uncorrelated_cpu_min_ts_us = ts
                else:
                    cpu_correlation.append(correlation)
                    cpu_ts_us.append(ts)
        self.event_count += count

    def _add_gpu(
        self,
        event: TraceEvent,
        name: str,
        ts: float,
        dur: float,
        stream: int,
        correlation: int,
        launched: bool,
    ) -> None:
        gpu = self.gpu
        name_id = self._name_ids.get(name)
        if name_id is None:
            name_id = self._name_ids[name] = len(self.names)
            self.names.append(name)
        args = event.args
        device = args.device if args is not None else None
        if type(device) is not int:
            # Kineto puts GPU rows under pid = device index.
            device = event.pid
        nbytes = _as_int(args.bytes) if args is not None else -1
        gpu.ts_us.append(ts)
        gpu.dur_us.append(dur)
        gpu.name_id.append(name_id)
        gpu.stream.append(stream)
        gpu.correlation.append(correlation)
        gpu.device.append(_as_int(device) if type(device) is int else -1)
        gpu.nbytes.append(max(nbytes, 0))
        gpu.launched.append(1 if launched else 0)

    def _add_dataloader(self, name: str, dur: float) -> None:
        self.dataloader_calls += 1
        self.dataloader_us += dur
        if len(self.dataloader_iterators) < 8:
            self.dataloader_iterators.add(name.removeprefix(_DATALOADER_PREFIX)[:120])

    def _add_memory(self, args: EventArgs) -> None:
        if args.device_type == _CPU_DEVICE_TYPE:
            return
        allocated = args.total_allocated
        if type(allocated) is int and (
            self.peak_allocated_bytes is None or allocated > self.peak_allocated_bytes
        ):
            self.peak_allocated_bytes = allocated
        reserved = args.total_reserved
        if type(reserved) is int and (
            self.peak_reserved_bytes is None or reserved > self.peak_reserved_bytes
        ):
            self.peak_reserved_bytes = reserved
