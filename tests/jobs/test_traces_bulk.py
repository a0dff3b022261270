"""The bulk event reader changes how fast a trace is read, never what is read from it.

Every check compares parse_trace with the bulk reader against parse_trace with every byte through
the token walker (bulk=False), on the real samples and on generated traces full of events the
bulk decoder must leave to the walker.
"""

import dataclasses
import gzip
import io
import json
import random

import pytest

from jobs.domain.traces import TraceError
from jobs.domain.traces.kineto.bulk import BulkEventReader
from jobs.domain.traces.kineto.parse import ParsedTrace, parse_trace
from tests.jobs.test_traces import NOT_KINETO, SAMPLES, TRACES, WITH_MEMORY

KINETO_SAMPLES = [sample for sample in SAMPLES if sample not in NOT_KINETO]


def _parse(data: bytes, *, bulk: bool) -> ParsedTrace:
    return parse_trace(io.BytesIO(data), label="t.json", bulk=bulk)


def _state(parsed: ParsedTrace) -> dict:
    """Everything the metrics are computed from."""
    collector = parsed.events
    state = {field.name: getattr(collector, field.name) for field in dataclasses.fields(collector)}
    state["gpu"] = {
        field.name: getattr(collector.gpu, field.name)
        for field in dataclasses.fields(collector.gpu)
    }
    return state | {"metadata": parsed.metadata, "warnings": parsed.warnings}


def _assert_same_as_walker(data: bytes) -> ParsedTrace:
    bulk = _parse(data, bulk=True)
    assert _state(bulk) == _state(_parse(data, bulk=False))
    return bulk


def _sample_bytes(sample: str) -> bytes:
    path = TRACES / sample
    return gzip.decompress(path.read_bytes()) if sample.endswith(".gz") else path.read_bytes()


def _remainder(data: bytes) -> tuple[bytes, int]:
    """What the walker gets to read, and how many events were decoded in bulk."""
    decoded: list = []
    reader = BulkEventReader(io.BytesIO(data), decoded.extend)
    parts = []
    while part := reader.read(256 * 1024):
        parts.append(part)
    return b"".join(parts), len(decoded)


@pytest.mark.parametrize("sample", KINETO_SAMPLES)
def test_every_sample_reads_the_same_with_and_without_the_bulk_reader(sample):
    _assert_same_as_walker(_sample_bytes(sample))


def test_the_walker_reads_only_the_metadata_and_the_last_event_of_a_kineto_trace():
    data = _sample_bytes(WITH_MEMORY)
    remainder, decoded = _remainder(data)
    events = json.loads(data)["traceEvents"]
    left = json.loads(remainder)
    assert left["traceEvents"] == events[-1:]
    assert decoded == len(events) - 1 == 216_091
    assert left["deviceProperties"] == json.loads(data)["deviceProperties"]
    assert len(remainder) < 16 * 1024


# --- generated traces with events the bulk decoder must leave to the walker ----------------------


def _plain_event(rng: random.Random, index: int) -> dict:
    ts = 1_700_000_000_000_000 + index * 10
    kind = rng.randrange(4)
    if kind == 0:
        return {
            "ph": "X",
            "cat": "cpu_op",
            "name": f"aten::op{index % 7}",
            "pid": 1,
            "tid": 2,
            "ts": ts,
            "dur": 5,
            "args": {"External id": index},
        }
    if kind == 1:
        return {
            "ph": "X",
            "cat": "cuda_runtime",
            "name": "cudaLaunchKernel",
            "pid": 1,
            "tid": 2,
            "ts": ts,
            "dur": 3,
            "args": {"correlation": index},
        }
    if kind == 2:
        return {
            "ph": "X",
            "cat": "kernel",
            "name": f"gemm_{index % 5}",
            "pid": 0,
            "tid": 7,
            "ts": ts + 0.5,
            "dur": 4.25,
            "args": {"stream": 7, "correlation": index, "device": 0, "grid": [1, 2, 3]},
        }
    return {
        "ph": "i",
        "cat": "cpu_instant_event",
        "name": "[memory]",
        "pid": 1,
        "tid": 2,
        "ts": ts,
        "args": {
            "Total Allocated": index * 1024,
            "Total Reserved": index * 2048,
            "Device Type": 1,
            "Device Id": 0,
        },
    }


# Events of shapes the typed decode refuses or must not mistake a cut in: each as raw JSON.
ODD_EVENTS = [
    b'{"ph": "X", "cat": "kernel", "name": {"nested": 1}, "ts": 5, "dur": 1, "pid": 0,'
    b' "args": {"stream": 7, "correlation": 1}}',
    b'{"ph": "X", "cat": "cpu_op", "name": "args as a list", "ts": 6, "dur": 1, "args": [1, 2]}',
    b"7",
    b'"a string item"',
    b'{"ph": "X", "cat": "cpu_op", "name": "a},{\\"b\\": 1},{c", "ts": 7, "dur": 1}',
    b'{"ph": "X", "cat": "kernel", "name": "k}, {", "ts": 8, "dur": "nan",'
    b' "args": {"stream": 7, "correlation": 2}}',
    b'{"ph": "X", "cat": "kernel", "name": "int64 ts", "ts": 9223372036854775807,'
    b' "dur": 2, "args": {"stream": 7, "correlation": 3}}',
    b'{"args": {"stream": 7, "correlation": 4, "extra": [{"a": 1}, {"b": 2}]},'
    b' "name": "args first, nested objects inside", "cat": "kernel", "ts": 9, "dur": 1}',
    b'{"ph": "X", "cat": "kernel", "name": "stream as a string", "ts": 10, "dur": 1,'
    b' "args": {"stream": "7", "correlation": "5", "bytes": "0x10"}}',
    b'{"ph": "X", "cat": "cpu_op", "name": "duplicate keys", "name": "ProfilerStep#3",'
    b' "ts": 11, "dur": 1}',
    b'{"name": "[memory]", "args": {"Total Allocated": {"not": "a number"}}}',
    b'{"ph": "X", "cat": "kernel", "name": "args then null", "ts": 12, "dur": 1,'
    b' "args": {"stream": 7, "correlation": 6}, "args": null}',
    b'{"ph": "X", "cat": "kernel", "name": "args then a list", "ts": 13, "dur": 1,'
    b' "args": {"stream": 7, "correlation": 7}, "args": [1]}',
    b'{"name": "[memory]", "args": {"Total Allocated": 9223372036854775807}}',
    b"{}",
]


def _generated_trace(seed: int, events: int = 20_000) -> bytes:
    """A ~3 MB trace (so several bulk runs) with odd events at random places, the first event
    among them (the walker must still see it first), pretty-printed and compact items mixed."""
    rng = random.Random(seed)
    items = [rng.choice(ODD_EVENTS)]
    for index in range(events):
        if rng.random() < 0.002:
            items.append(rng.choice(ODD_EVENTS))
        event = _plain_event(rng, index)
        indent = 2 if rng.random() < 0.5 else None
        items.append(json.dumps(event, indent=indent).encode())
    separators = [b",", b",\n  ", b" , "]
    body = b"".join(item + rng.choice(separators) for item in items[:-1]) + items[-1]
    return (
        b'{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB",'
        b' "totalGlobalMem": 85198045184}],\n"traceEvents": [\n' + body + b"\n],\n"
        b'"traceName": "generated", "distributedInfo": {"rank": 3, "world_size": 8}}'
    )


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_odd_events_anywhere_are_read_as_the_walker_reads_them(seed):
    data = _generated_trace(seed)
    assert len(data) > 3 * 2**20
    parsed = _assert_same_as_walker(data)
    assert parsed.rank == 3
    assert parsed.events.event_count > 20_000
    _, decoded = _remainder(data)
    assert decoded > 19_000, "odd events must not push the rest of the trace to the walker"


def test_an_odd_first_event_still_sets_the_time_base():
    data = (
        b'{"traceEvents": ['
        + ODD_EVENTS[0]
        + b","
        + b",".join(
            json.dumps(_plain_event(random.Random(0), index)).encode() for index in range(100)
        )
        + b"]}"
    )
    parsed = _assert_same_as_walker(data)
    assert parsed.events.time_base_us == 5.0


@pytest.mark.parametrize(
    "layout",
    [
        pytest.param(b"[{events}]", id="bare 2020 list"),
        pytest.param(b'{{"traceName": "x", "traceEvents": [{events}]}}', id="key after metadata"),
        pytest.param(
            b'{{"meta": {{"traceEvents": [{{"name": "not these"}}, {{"name": "x"}}]}},'
            b' "traceEvents": [{events}]}}',
            id="nested key first",
        ),
        pytest.param(
            b'{{"note": "\\"traceEvents\\": [", "traceEvents": [{events}]}}', id="key in a string"
        ),
        pytest.param(b'{{"traceEvents": [{events}], "traceEvents": [{events}]}}', id="twice"),
    ],
)
def test_every_layout_reads_the_same(layout):
    events = b",\n".join(
        json.dumps(_plain_event(random.Random(1), index)).encode() for index in range(500)
    )
    data = layout.replace(b"{{", b"{").replace(b"}}", b"}").replace(b"{events}", events)
    _assert_same_as_walker(data)


def test_the_nested_key_is_not_taken_for_the_event_list():
    events = b",".join(json.dumps(_plain_event(random.Random(2), i)).encode() for i in range(50))
    data = b'{"meta": {"traceEvents": [{"a": 1}, {"b": 2}]}, "traceEvents": [' + events + b"]}"
    _, decoded = _remainder(data)
    assert decoded == 0


def _long_trace_around(bad_event: bytes) -> bytes:
    rng = random.Random(5)
    events = [json.dumps(_plain_event(rng, index)).encode() for index in range(20_000)]
    events.insert(12_345, bad_event)
    return b'{"traceEvents": [' + b",\n".join(events) + b"]}"


@pytest.mark.parametrize(
    ("bad_event", "message"),
    [
        (b'{"name": "x", "junk": "\xff\xfe", "ts": 1, "dur": 1}', "not valid JSON"),
        (b'{"name": "x" "ts": 1}', "not valid JSON"),
        (b'{"name": "x", "ts": 01}', "not valid JSON"),
        (b'{"junk": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested deeper than 64"),
        (b'{"name": "\\udc00", "ts": 1, "dur": 1}', "not valid UTF-8 text"),
        (b'{"name": "x", "cat": "k", "ts": 1' + b"0" * 400 + b', "dur": 1}', "integer overflow"),
        (b'{"name": "x", "cat": "k", "ts": 1, "dur": 1e400}', "floating point"),
        (b'{"name": "[memory]", "args": {"Total Reserved": 9223372036854775808}}', "overflow"),
    ],
    ids=[
        "invalid utf-8 in an unread field",
        "missing comma",
        "leading zero",
        "deep nesting",
        "lone surrogate escape",
        "ts past int64",
        "dur past float",
        "memory total past int64",
    ],
)
@pytest.mark.parametrize("bulk", [True, False], ids=["bulk", "walker"])
def test_a_broken_event_deep_in_a_long_trace_gets_the_walkers_message(bad_event, message, bulk):
    with pytest.raises(TraceError, match=message):
        _parse(_long_trace_around(bad_event), bulk=bulk)


def test_a_trace_cut_short_deep_in_its_events_ends_early():
    data = _long_trace_around(b"{}")
    with pytest.raises(TraceError, match="the JSON ends early"):
        _parse(data[: len(data) * 2 // 3], bulk=True)


@pytest.mark.parametrize(
    "junk",
    [
        b"[" * 100 + b"]" * 100,
        b"123456789012345678901234567890",
        b"-1e400",
    ],
    ids=["nested 100 deep", "integer past int64", "float past 1.8e308"],
)
def test_an_unread_field_the_walker_would_refuse_is_skipped_inside_a_bulk_run(junk):
    # The documented difference: msgspec checks the syntax of the fields it skips, not their
    # depth or the range of their numbers; the walker refuses all three.
    data = _long_trace_around(
        b'{"name": "x", "cat": "cpu_op", "ts": 1, "dur": 1, "junk": ' + junk + b"}"
    )
    assert _parse(data, bulk=True).events.event_count == 20_001
    with pytest.raises(TraceError):
        _parse(data, bulk=False)


def test_false_cuts_in_many_events_do_not_stop_the_bulk_reading():
    # Names with `},{` and args holding lists of objects: cuts inside them fail, including the
    # last cut of a buffer when it falls in the unfinished event at the buffer's end.
    rng = random.Random(7)
    events = []
    for index in range(20_000):
        event = _plain_event(rng, index)
        event["name"] = f"x}},{{y{index}"
        if index % 3 == 0:
            event["args"]["shapes"] = [{"a": 1}, {"b": 2}]
        events.append(json.dumps(event).encode())
    data = b'{"traceEvents": [' + b",".join(events) + b"]}"
    _assert_same_as_walker(data)
    _, decoded = _remainder(data)
    assert decoded > 19_000
