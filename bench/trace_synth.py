"""The benchmark's inputs: a Kineto trace described, and a longer one made from it.

Both run in child processes of the benchmark (see trace_vs_hta.py), so that it stays small: a
child's ru_maxrss starts from the RSS of the process that spawned it.
"""

import gzip
import json
import math
from pathlib import Path


def describe_trace(path: Path) -> dict:
    """Events and layout of a Kineto trace (child mode --describe)."""
    with gzip.open(path, "rb") as stream:
        trace = json.load(stream)
    events = trace["traceEvents"]
    timed = [event for event in events if event.get("ph") != "M" and "ts" in event]
    start = min(event["ts"] for event in timed)
    end = max(event["ts"] + event.get("dur", 0) for event in timed)
    steps = sorted({e["name"] for e in timed if str(e.get("name", "")).startswith("ProfilerStep#")})
    return {
        "events": len(events),
        "metadata_events": len(events) - sum(1 for e in events if e.get("ph") != "M"),
        "span_us": end - start,
        "profiler_steps": len(steps),
        "integer_timestamps": all(isinstance(event["ts"], int) for event in timed),
        "distributed_info": trace.get("distributedInfo"),
    }


def write_synthetic(source: Path, target: Path, min_events: int) -> dict:
    """Repeat source's events in time until there are at least min_events (child mode
    --make-synthetic). Written to target gzipped, one event at a time.

    Repetition k shifts every timestamp by k times the sample's span (first event start to
    last event end), so the copies follow each other without overlapping; metadata events
    ("ph": "M") are written once; the top-level keys (distributedInfo, deviceProperties...)
    are kept as they are. So that the result reads as one longer profile rather than the same
    seconds five times over, correlation ids, External ids and flow ids are offset by k times
    (their maximum + 1), and ProfilerStep#N becomes ProfilerStep#(N + k * steps): both tools
    then drop only the last step of the last copy, as they would on a real long trace.
    """
    with gzip.open(source, "rb") as stream:
        trace = json.load(stream)
    events = trace["traceEvents"]
    metadata = [event for event in events if event.get("ph") == "M"]
    timed = [event for event in events if event.get("ph") != "M"]
    with_ts = [event for event in timed if "ts" in event]
    start = min(event["ts"] for event in with_ts)
    span = max(event["ts"] + event.get("dur", 0) for event in with_ts) - start
    id_stride = 1 + max(
        [
            value
            for event in timed
            for value in (
                event.get("id"),
                event.get("args", {}).get("correlation"),
                event.get("args", {}).get("External id"),
            )
            if isinstance(value, int)
        ]
        or [0]
    )
    step_numbers = [
        int(event["name"].split("#", 1)[1])
        for event in timed
        if str(event.get("name", "")).startswith("ProfilerStep#")
    ]
    step_stride = max(step_numbers) - min(step_numbers) + 1 if step_numbers else 0
    copies = max(1, math.ceil((min_events - len(metadata)) / len(timed)))

    def shifted(event: dict, copy: int) -> dict:
        if copy == 0:
            return event
        event = dict(event)
        if "ts" in event:
            event["ts"] = event["ts"] + copy * span
        if isinstance(event.get("id"), int) and event["id"] > 0:
            event["id"] = event["id"] + copy * id_stride
        args = event.get("args")
        if args:
            args = dict(args)
            for key in ("correlation", "External id"):
                if isinstance(args.get(key), int) and args[key] > 0:
                    args[key] = args[key] + copy * id_stride
            event["args"] = args
        name = event.get("name")
        if isinstance(name, str) and name.startswith("ProfilerStep#"):
            event["name"] = f"ProfilerStep#{int(name.split('#', 1)[1]) + copy * step_stride}"
        return event

    written = 0
    with gzip.open(target, "wt", encoding="utf-8", compresslevel=6) as out:
        out.write("{")
        for index, (key, value) in enumerate(trace.items()):
            out.write(("," if index else "") + json.dumps(key) + ":")
            if key != "traceEvents":
                out.write(json.dumps(value))
                continue
            out.write("[")
            first = True
            for event in metadata:
                out.write(("" if first else ",\n") + json.dumps(event))
                first = False
                written += 1
            for copy in range(copies):
                for event in timed:
                    out.write(("" if first else ",\n") + json.dumps(shifted(event, copy)))
                    first = False
                    written += 1
            out.write("]")
        out.write("}")
    return {
        "events": written,
        "copies": copies,
        "shift_us": span,
        "id_offset": id_stride,
        "profiler_steps": len(step_numbers) * copies,
    }
