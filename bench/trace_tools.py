"""Each tool run on one trace in a child process of its own, measured by procfs.measure."""

import json
import os
import shutil
from pathlib import Path

from hta_venv import hta_python
from machine import PYTHON
from procfs import measure

MAX_DECOMPRESSED_BYTES = 2 * 2**30

# Runs in the HTA virtualenv: argv[1] is the trace directory, argv[2] the JSON file to write
# (HTA logs to stdout and stderr, so the answer goes to a file of its own).
HTA_DRIVER = """\
import json, os, sys, time

started = time.perf_counter()
from hta.trace_analysis import TraceAnalysis

imported = time.perf_counter()
analyzer = TraceAnalysis(trace_dir=sys.argv[1])
loaded = time.perf_counter()
breakdown = analyzer.get_temporal_breakdown(visualize=False)
done = time.perf_counter()

from importlib.metadata import version

with open(sys.argv[2], "w") as out:
    json.dump(
        {
            "ranks": json.loads(breakdown.to_json(orient="records")),
            "phases_s": {
                "import": imported - started,
                "load_traces": loaded - imported,
                "temporal_breakdown": done - loaded,
            },
            "versions": {
                "python": sys.version.split()[0],
                **{name: version(name) for name in
                   ("holistictraceanalysis", "torch", "pandas", "numpy")},
            },
            "HTA_DISABLE_NS_ROUNDING": os.environ.get("HTA_DISABLE_NS_ROUNDING"),
        },
        out,
    )
"""


def run_ours(trace: Path, *, timeout: float, workdir: Path) -> dict:
    command = [
        str(PYTHON),
        "-m",
        "jobs.runner",
        "--kind",
        "trace",
        "--max-decompressed-bytes",
        str(MAX_DECOMPRESSED_BYTES),
        str(trace),
    ]
    result = measure(command, env=dict(os.environ), timeout=timeout, workdir=workdir)
    ranks = None
    if result["exit_code"] == 0:
        report = json.loads(result["stdout"])["report"]
        ranks = [
            {
                "rank": rank["rank"],
                "idle_pct": rank["idle_pct"],
                "kernel_time_us": rank["kernel_time_us"],
                "idle_us": rank["idle_us"],
                "gpu_events": rank["gpu_event_count"],
                "last_step_dropped": rank["last_step_dropped"],
                "ns_rounding_used": rank["ns_rounding_used"],
            }
            for rank in report["ranks"]
        ]
    return _run_record(result, ranks)


def run_hta(trace: Path, *, venv: Path, driver: Path, timeout: float, workdir: Path) -> dict:
    trace_dir = workdir / "hta_trace_dir"
    shutil.rmtree(trace_dir, ignore_errors=True)
    trace_dir.mkdir()
    (trace_dir / trace.name).symlink_to(trace.resolve())
    answer = workdir / "hta_answer.json"
    answer.unlink(missing_ok=True)
    env = {**os.environ, "HTA_DISABLE_NS_ROUNDING": "1"}
    command = [str(hta_python(venv)), str(driver), str(trace_dir), str(answer)]
    result = measure(command, env=env, timeout=timeout, workdir=workdir, cwd=workdir)
    ranks, extra = None, {}
    if result["exit_code"] == 0 and answer.exists():
        output = json.loads(answer.read_text())
        ranks = [
            {
                "rank": rank["rank"],
                "idle_pct": rank["idle_time_pctg"],
                "kernel_time_us": rank["kernel_time(us)"],
                "idle_us": rank["idle_time(us)"],
            }
            for rank in output["ranks"]
        ]
        extra = {
            "phases_s": {key: round(value, 3) for key, value in output["phases_s"].items()},
            "versions": output["versions"],
            "HTA_DISABLE_NS_ROUNDING": output["HTA_DISABLE_NS_ROUNDING"],
        }
    return {**_run_record(result, ranks), **extra}


def _run_record(result: dict, ranks: list[dict] | None) -> dict:
    record = {
        key: round(value, 3) if isinstance(value, float) else value
        for key, value in result.items()
        if key not in ("stdout", "stderr_tail")
    }
    record["ranks"] = ranks
    if ranks is None:
        record["stderr_tail"] = result["stderr_tail"]
    return record
