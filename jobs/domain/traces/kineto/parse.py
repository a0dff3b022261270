"""Stream a Kineto (Chrome-trace) JSON document into a ParsedTrace without ever holding it whole.

Two readers share the work. BulkEventReader (bulk.py) decodes the event list's plain events in
half-megabyte runs; everything it leaves (the metadata, the last event, any event of an odd
shape, or the whole document when it is not what a profiler writes) reaches the token walker
here: ijson's C backend turns bytes into (event, value) tokens, the walker follows them with a
depth counter, so hostile nesting is refused at level 65 before anything deep is built, and
hands each trace event's scalars to the same EventCollector. Both layouts Kineto has written are
accepted: the object `{"traceEvents": [...], "deviceProperties": [...], ...}` and the bare
2020-era event list.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import ijson

from catalog.domain.json_depth import MAX_JSON_DEPTH
from jobs.domain.traces.errors import TraceError
from jobs.domain.traces.kineto.bulk import BulkEventReader
from jobs.domain.traces.kineto.collect import ARG_KEYS, EventCollector, event_from_scalars
from jobs.domain.traces.sources import Readable

# Top-level keys worth building as Python values; everything else is skipped token by token.
_METADATA_KEYS = frozenset({"deviceProperties", "computeProperties", "distributedInfo"})
# deviceProperties is a few dozen values per GPU; refuse to build absurd ones.
_MAX_METADATA_VALUES = 100_000
_BUFFER_BYTES = 256 * 1024


@dataclass
class ParsedTrace:
    label: str
    events: EventCollector
    metadata: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def rank(self) -> int | None:
        return _int_or_none(_mapping(self.metadata.get("distributedInfo")).get("rank"))

    @property
    def world_size(self) -> int | None:
        return _int_or_none(_mapping(self.metadata.get("distributedInfo")).get("world_size"))

    @property
    def device_properties(self) -> list[dict[str, Any]]:
        """deviceProperties, or the 2021 tb_plugin schema's computeProperties (same idea,
        "major"/"minor" instead of "computeMajor"/"computeMinor"), as found."""
        for key in ("deviceProperties", "computeProperties"):
            value = self.metadata.get(key)
            if isinstance(value, list) and value:
                return [item for item in value if isinstance(item, dict)]
        return []


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int_or_none(value: Any) -> int | None:
    return value if type(value) is int else None


def parse_trace(reader: Readable, *, label: str, bulk: bool = True) -> ParsedTrace:
    """Parse one trace's JSON bytes; raise TraceError for anything that is not a Kineto trace.

    bulk=False sends every byte through the token walker: the reference the bulk reader's
    results are tested against, several times slower.
    """
    walker = _Walker(label)
    if bulk:
        reader = BulkEventReader(reader, walker.collector.add_events)
    try:
        walker.walk(ijson.basic_parse(reader, use_float=True, buf_size=_BUFFER_BYTES))
    except ijson.common.JSONError as exc:
        detail = _first_line(exc)
        if "premature EOF" in detail:
            raise TraceError(
                f"{label}: the JSON ends early: the file looks truncated "
                "(was the profiler stopped before it finished writing?)"
            ) from None
        raise TraceError(f"{label}: not valid JSON ({detail})") from None
    except UnicodeDecodeError:
        # yajl passes escapes such as a lone \udc00 and some invalid byte sequences; ijson's
        # decoding of the string then refuses them.
        raise TraceError(f"{label}: not valid JSON (a string is not valid UTF-8 text)") from None
    return walker.result()


def _first_line(exc: Exception) -> str:
    """yajl's messages are bytes with a drawing of the offending text under the first line."""
    message = exc.args[0] if exc.args else ""
    if isinstance(message, bytes):
        message = message.decode("utf-8", errors="replace")
    lines = str(message).strip().splitlines()
    return lines[0] if lines else "invalid JSON"


class _ValueBuilder:
    """Builds one small metadata value (deviceProperties...) from tokens."""

    def __init__(self) -> None:
        self.value: Any = None
        self._stack: list[Any] = []
        self._count = 0

    def start(self, key: str | None, is_map: bool) -> None:
        container: Any = {} if is_map else []
        self._add(key, container)
        self._stack.append(container)

    def end(self) -> None:
        self._stack.pop()

    def scalar(self, key: str | None, value: Any) -> None:
        self._add(key, value)

    @property
    def done(self) -> bool:
        return not self._stack

    def _add(self, key: str | None, value: Any) -> None:
        self._count += 1
        if not self._stack:
            self.value = value
            return
        if self._count > _MAX_METADATA_VALUES:
            return
        parent = self._stack[-1]
        if isinstance(parent, dict):
            parent[key] = value
        else:
            parent.append(value)


class _Walker:
    def __init__(self, label: str) -> None:
        self.label = label
        self.collector = EventCollector()
        self.metadata: dict[str, Any] = {}
        self.top_keys: set[str] = set()
        self.top_kind: str | None = None  # "map" or "list"
        self.saw_event_list = False
        self.non_event_items = 0

    def walk(self, tokens: Iterable[tuple[str, Any]]) -> None:
        # One flat loop over millions of tokens: locals and plain comparisons on purpose.
        add_events = self.collector.add_events
        arg_keys = ARG_KEYS
        depth = 0
        key: str | None = None
        top_key: str | None = None
        list_depth = -1  # depth of the event list once inside it
        item_depth = -1  # depth of the events themselves
        event: dict[str, Any] | None = None
        args: dict[str, Any] | None = None
        in_args = False
        meta: _ValueBuilder | None = None
        for token, value in tokens:
            if token == "map_key":
                key = value
                if depth == 1:
                    top_key = value
                    self._note_top_key(value)
            elif token == "start_map" or token == "start_array":
                depth += 1
                if depth > MAX_JSON_DEPTH:
                    raise TraceError(
                        f"{self.label}: JSON nested deeper than {MAX_JSON_DEPTH} levels; "
                        "a profiler trace is never that deep"
                    )
                if event is not None:
                    if depth == item_depth + 1:
                        in_args = key == "args" and token == "start_map"
                        if key == "args":  # a repeated key: the last value wins
                            args = {} if in_args else None
                elif depth == item_depth:
                    if token == "start_map":
                        event = {}
                        args = None
                    else:
                        self.non_event_items += 1
                elif meta is not None:
                    meta.start(key, token == "start_map")
                elif depth == 1:
                    self.top_kind = "map" if token == "start_map" else "list"
                    if token == "start_array":
                        list_depth, item_depth = 1, 2
                        self.saw_event_list = True
                elif depth == 2 and top_key == "traceEvents" and list_depth == -1:
                    if token != "start_array":
                        raise TraceError(
                            f"{self.label}: JSON but not a trace: traceEvents is not a list"
                        )
                    list_depth, item_depth = 2, 3
                    self.saw_event_list = True
                elif depth == 2 and top_key in _METADATA_KEYS:
                    meta = _ValueBuilder()
                    meta.start(None, token == "start_map")
            elif token == "end_map" or token == "end_array":
                if event is not None:
                    if depth == item_depth:
                        add_events((event_from_scalars(event, args),))
                        event = args = None
                    elif depth == item_depth + 1:
                        in_args = False
                elif meta is not None:
                    meta.end()
                    if meta.done:
                        self.metadata[top_key or ""] = meta.value
                        meta = None
                elif depth == list_depth:
                    list_depth = item_depth = -1
                depth -= 1
            elif event is not None:
                if depth == item_depth:
                    event[key] = value  # type: ignore[index]
                    if key == "args":
                        args = None
                elif in_args and depth == item_depth + 1 and key in arg_keys:
                    args[key] = value  # type: ignore[index]
            elif meta is not None:
                meta.scalar(key, value)
            elif depth == list_depth:
                self.non_event_items += 1
            elif depth == 1 and top_key == "traceEvents":
                raise TraceError(f"{self.label}: JSON but not a trace: traceEvents is not a list")
            elif depth == 1 and top_key is not None and self.top_kind == "map":
                if isinstance(value, int | float | bool) or (
                    isinstance(value, str) and len(value) <= 256
                ):
                    self.metadata[top_key] = value
            elif depth == 0:
                self.top_kind = "scalar"

    def _note_top_key(self, key: str) -> None:
        self.top_keys.add(key)
        if {"schema", "nodes"} <= self.top_keys and "traceEvents" not in self.top_keys:
            raise TraceError(_EXECUTION_TRACE_MESSAGE.format(label=self.label))

    def result(self) -> ParsedTrace:
        label = self.label
        if self.top_kind != "map" and self.top_kind != "list":
            raise TraceError(f"{label}: JSON but not a trace: a single value, not an object")
        if not self.saw_event_list:
            raise TraceError(f"{label}: JSON but not a trace: no traceEvents")
        collector = self.collector
        if collector.event_count == 0 and self.non_event_items:
            shape = "a list" if self.top_kind == "list" else "traceEvents"
            raise TraceError(
                f"{label}: JSON but not a trace: {shape} of {self.non_event_items} values that "
                "are not trace events (a torch memory-timeline export looks like this)"
            )
        parsed = ParsedTrace(label=label, events=collector, metadata=self.metadata)
        if collector.event_count == 0:
            parsed.warnings.append(f"{label}: traceEvents is empty")
        if collector.unreadable_count:
            parsed.warnings.append(
                f"{label}: {collector.unreadable_count} events skipped: ts or dur not a number"
            )
        return parsed


_EXECUTION_TRACE_MESSAGE = (
    "{label}: this is a PyTorch Execution Trace (ET), not a profiler (Kineto) trace; upload "
    "the file torch.profiler writes with export_chrome_trace() or tensorboard_trace_handler()"
)
