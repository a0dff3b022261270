"""Benchmark of our trace analysis against Holistic Trace Analysis (HTA) on the same traces.

Run from the repository root:

    .venv/bin/python bench/trace_vs_hta.py

One run does, in order:

1. Makes sure HTA is installed in a separate virtualenv, ``.venv-hta/`` in the repository root
   (gitignored; HTA is not a project dependency): when it is missing, creates it with
   ``python3 -m venv`` and installs ``torch==2.13.0 holistictraceanalysis==0.5.0 'pandas<3'``,
   after a ``pip install --dry-run --report`` that must show a CPU-only torch and no CUDA
   package (``nvidia-*``, ``triton``) or the install is refused.
2. Prepares the inputs in a temporary directory: the largest sample trace
   (``df_index_resolver.json.gz``, 216k events, one rank) and a synthetic ~1M-event trace made
   by repeating that sample's events in time (see ``write_synthetic``), written gzipped and
   streamed, event by event.
3. For each input, runs each tool ``--repeats`` times, alternating, one child process at a
   time, and takes the medians:

   - ours: ``python -m jobs.runner --kind trace --max-decompressed-bytes 2147483648 FILE``,
     as the worker runs it;
   - HTA: a small driver (written to a temporary file) that calls
     ``TraceAnalysis(trace_dir=DIR).get_temporal_breakdown(visualize=False)`` on a directory
     holding a link to the trace, with ``HTA_DISABLE_NS_ROUNDING=1`` (our default is no
     rounding; the sample's timestamps are whole microseconds anyway).

   Wall time is measured around the child, from spawn to exit (interpreter start and imports
   included); peak RSS is the child's own ``ru_maxrss`` from ``os.wait4``, cross-checked by
   sampling the RSS of the child's whole process tree every 20 ms.
4. Compares both tools' idle % per rank (difference in percentage points; they should agree
   within 0.5 pp) and reports speedup (HTA wall / ours) and memory ratio (ours peak / HTA peak).
   Goals: at least 5x faster, at most a tenth of HTA's peak memory.

Results go to bench/results/trace_vs_hta.json and bench/results/trace_vs_hta.md; the table is
printed. Only local files; a hard wall-clock cap (``--max-seconds``) bounds the timed runs.
"""

import argparse
import contextlib
import gzip
import json
import math
import os
import platform
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from machine import cpu_model, git_revision, write_results

ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = ROOT / "bench" / "results"
PYTHON = ROOT / ".venv" / "bin" / "python"
HTA_VENV = ROOT / ".venv-hta"
SAMPLE = ROOT / "tests/fixtures/traces/hta/tests/data/df_index_resolver/df_index_resolver.json.gz"
HTA_REQUIREMENTS = ["torch==2.13.0", "holistictraceanalysis==0.5.0", "pandas<3"]
MAX_DECOMPRESSED_BYTES = 2 * 2**30
SPEEDUP_GOAL = 5.0
MEMORY_RATIO_GOAL = 0.1
IDLE_AGREEMENT_PP = 0.5
INSTALL_TIMEOUT_S = 1200
RSS_SAMPLE_INTERVAL_S = 0.02
MIB = 2**20

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


# --------------------------------------------------------------------------------------------
# Machine


def machine_info() -> dict:
    try:
        usable_cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        usable_cpus = os.cpu_count()
    try:
        total_memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        total_memory = 0
    return {
        "date_utc": datetime.now(UTC).isoformat(timespec="seconds"),
        "load_average_at_start": [round(value, 2) for value in os.getloadavg()],
        "cpu_count": os.cpu_count(),
        "cpus_usable": usable_cpus,
        "cpu_model": cpu_model(),
        "memory_gib": round(total_memory / 2**30, 1),
        "platform": platform.platform(),
        "python_bench": platform.python_version(),
        "git_revision": git_revision(),
    }


# --------------------------------------------------------------------------------------------
# The HTA virtualenv


def _pip(command: list[str], log_path: Path) -> None:
    """Run pip with its output in log_path (it warns about every local index it skips)."""
    with open(log_path, "w") as log:
        completed = subprocess.run(
            command, stdout=log, stderr=subprocess.STDOUT, timeout=INSTALL_TIMEOUT_S
        )
    if completed.returncode != 0:
        tail = log_path.read_text(errors="replace")[-3000:]
        raise SystemExit(f"pip failed ({completed.returncode}):\n{tail}")


def hta_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def ensure_hta_venv(venv: Path) -> dict:
    """Create the HTA virtualenv when it is missing; refuse a CUDA build of torch."""
    python = hta_python(venv)
    check = [str(python), "-c", "import hta.trace_analysis, torch, pandas"]
    if python.exists() and subprocess.run(check, capture_output=True, timeout=300).returncode == 0:
        return {"created": False, "venv": str(venv.relative_to(ROOT))}
    started = time.monotonic()
    print(f"Creating {venv} for HTA (one time; torch is large, this takes a few minutes)")
    base_python = shutil.which("python3") or sys.executable
    subprocess.run([base_python, "-m", "venv", str(venv)], check=True, timeout=300)
    pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check"]
    with tempfile.TemporaryDirectory(prefix="hta-pip-") as tmp:
        report_path, log_path = Path(tmp) / "report.json", Path(tmp) / "pip.log"
        _pip([*pip, "--dry-run", "--report", str(report_path), *HTA_REQUIREMENTS], log_path)
        planned = {
            item["metadata"]["name"].lower(): item["metadata"]["version"]
            for item in json.loads(report_path.read_text())["install"]
        }
        torch_version = planned.get("torch", "")
        cuda = sorted(name for name in planned if name.startswith(("nvidia-", "triton")))
        if not torch_version.endswith("+cpu") or cuda:
            raise SystemExit(
                f"refusing to install torch {torch_version or '(none)'} with {cuda or 'no'} "
                "CUDA packages: a CPU-only torch==2.13.0 wheel was expected (it lies in the "
                f"local wheel directory pip is configured with). Remove {venv} and check "
                "pip's configuration."
            )
        print(f"pip will install {len(planned)} packages, torch {torch_version}, no CUDA package")
        _pip([*pip, *HTA_REQUIREMENTS], log_path)
    subprocess.run(check, check=True, timeout=300)
    return {
        "created": True,
        "venv": str(venv.relative_to(ROOT)),
        "install_s": round(time.monotonic() - started, 1),
        "torch": torch_version,
        "packages_installed": len(planned),
    }


# --------------------------------------------------------------------------------------------
# Inputs (done in child processes, so that this process stays small: a child's ru_maxrss
# starts from the RSS of the process that spawned it)


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


def child_json(args: list[str], timeout: float) -> dict:
    completed = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    )
    return json.loads(completed.stdout)


# --------------------------------------------------------------------------------------------
# Measuring one child process


class TreeRssSampler(threading.Thread):
    """Peak of the summed RSS of a process and its descendants, sampled from /proc."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak_bytes = 0
        self.processes_seen = {pid}
        self._stop_event = threading.Event()

    def stop(self) -> None:
        self._stop_event.set()
        self.join()

    def run(self) -> None:
        page = os.sysconf("SC_PAGE_SIZE")
        while not self._stop_event.is_set():
            total = 0
            pending = [self.pid]
            while pending:
                pid = pending.pop()
                try:
                    with open(f"/proc/{pid}/statm") as statm:
                        total += int(statm.read().split()[1]) * page
                    for task in os.listdir(f"/proc/{pid}/task"):
                        with open(f"/proc/{pid}/task/{task}/children") as children:
                            for child in children.read().split():
                                pending.append(int(child))
                                self.processes_seen.add(int(child))
                except (OSError, ValueError, IndexError):
                    continue
            self.peak_bytes = max(self.peak_bytes, total)
            self._stop_event.wait(RSS_SAMPLE_INTERVAL_S)


def measure(
    command: list[str], *, env: dict[str, str], timeout: float, workdir: Path, cwd: Path = ROOT
) -> dict:
    """Run command as one child; its wall time, its own peak RSS (os.wait4) and outputs."""
    stdout_path, stderr_path = workdir / "child.stdout", workdir / "child.stderr"
    with open(stdout_path, "wb") as stdout, open(stderr_path, "wb") as stderr:
        started = time.perf_counter()
        process = subprocess.Popen(
            command, cwd=cwd, env=env, stdout=stdout, stderr=stderr, start_new_session=True
        )
        sampler = TreeRssSampler(process.pid)
        sampler.start()
        timed_out, reaped, lock = threading.Event(), threading.Event(), threading.Lock()

        def kill() -> None:
            with lock:  # never signal a process group id that may have been reused
                if reaped.is_set():
                    return
                timed_out.set()
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)

        timer = threading.Timer(max(timeout, 1.0), kill)
        timer.start()
        try:
            _, status, usage = os.wait4(process.pid, 0)
        finally:
            with lock:
                reaped.set()
            timer.cancel()
        wall_s = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        sampler.stop()
    return {
        "wall_s": wall_s,
        "peak_rss_mib": usage.ru_maxrss * 1024 / MIB,  # Linux: kilobytes
        "sampled_tree_peak_rss_mib": sampler.peak_bytes / MIB,
        "processes": len(sampler.processes_seen),
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "exit_code": process.returncode,
        "timed_out": timed_out.is_set(),
        "stdout": stdout_path.read_text(errors="replace"),
        "stderr_tail": stderr_path.read_text(errors="replace")[-2000:],
    }


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


def median_of(runs: list[dict], key: str) -> float | None:
    values = [run[key] for run in runs if run["ranks"] is not None]
    return round(statistics.median(values), 3) if values else None


def compare_idle(ours: list[dict] | None, hta: list[dict] | None) -> list[dict]:
    by_rank = {rank["rank"]: rank for rank in hta or []}
    rows = []
    for rank in ours or []:
        theirs = by_rank.get(rank["rank"])
        row = {
            "rank": rank["rank"],
            "ours_idle_pct": round(rank["idle_pct"], 3),
            "hta_idle_pct": theirs["idle_pct"] if theirs else None,
            "ours_kernel_time_us": rank["kernel_time_us"],
            "hta_kernel_time_us": theirs["kernel_time_us"] if theirs else None,
        }
        if theirs:
            row["difference_pp"] = round(rank["idle_pct"] - theirs["idle_pct"], 3)
            row["agrees"] = abs(row["difference_pp"]) <= IDLE_AGREEMENT_PP
        rows.append(row)
    return rows


# --------------------------------------------------------------------------------------------
# Output


def markdown(results: dict) -> str:
    machine = results["machine"]
    hta = results.get("hta_versions") or {}
    lines = [
        "# Trace analysis: ours against Holistic Trace Analysis",
        "",
        f"{machine['date_utc']}, {machine['cpus_usable']} CPUs usable ({machine['cpu_model']}), "
        f"{machine['memory_gib']} GiB, revision {machine['git_revision']}; load average "
        f"{machine['load_average_at_start'][0]} at start, "
        f"{machine.get('load_average_at_end', ['?'])[0]} at end.",
        f"Ours: Python {results['python_ours']}, `python -m jobs.runner --kind trace` in a child "
        f"process. HTA {hta.get('holistictraceanalysis', '?')} (torch {hta.get('torch', '?')}, "
        f"pandas {hta.get('pandas', '?')}, numpy {hta.get('numpy', '?')}, Python "
        f"{hta.get('python', '?')}), `TraceAnalysis(...).get_temporal_breakdown()` in a child "
        f"process, HTA_DISABLE_NS_ROUNDING=1. Medians of {results['repeats']} runs each.",
        "Produced by `.venv/bin/python bench/trace_vs_hta.py`; see bench/README.md.",
        "",
        "| input | events | file MiB | ours wall s | ours peak RSS MiB | HTA wall s | "
        "HTA peak RSS MiB | speedup (HTA/ours) | memory (ours/HTA) | speedup in CPU time |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, row in results["inputs"].items():
        lines.append(
            f"| {name} | {row['events']:,} | {row['file_mib']} | {_fmt(row['ours']['wall_s'])} | "
            f"{_fmt(row['ours']['peak_rss_mib'])} | {_fmt(row['hta']['wall_s'])} | "
            f"{_fmt(row['hta']['peak_rss_mib'])} | {_fmt(row['speedup'], 'x')} | "
            f"{_fmt(row['memory_ratio'])} | {_fmt(row['speedup_cpu_time'], 'x')} |"
        )
    goals = results["goals"]
    lines += [
        "",
        "Speedup is by wall time, the goal's measure; both tools run on one core, so the "
        "ratio of their CPU times (user + system) is a check that moves less when another "
        "process shares the machine.",
        "",
        f"Goals: speedup >= {goals['speedup_min']}x: "
        f"**{'met' if goals['speedup_met'] else 'NOT met'}**; memory <= "
        f"{goals['memory_ratio_max']} of HTA's peak: "
        f"**{'met' if goals['memory_met'] else 'NOT met'}**; idle % within "
        f"{IDLE_AGREEMENT_PP} pp of HTA's on every rank: "
        f"**{'yes' if goals['idle_agrees'] else 'NO'}**"
        + (" (cut short by the time cap)" if results.get("truncated_by_time_cap") else "")
        + ".",
        "",
        "## Idle % per rank",
        "",
        "| input | rank | ours idle % | HTA idle % | difference pp | ours window us | "
        "HTA window us |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, row in results["inputs"].items():
        for rank in row["idle_by_rank"]:
            lines.append(
                f"| {name} | {rank['rank']} | {rank['ours_idle_pct']} | "
                f"{_fmt(rank['hta_idle_pct'])} | {_fmt(rank.get('difference_pp'))} | "
                f"{rank['ours_kernel_time_us']:,.0f} | {_fmt(rank['hta_kernel_time_us'], ',')} |"
            )
    lines += [
        "",
        f"They should agree within {IDLE_AGREEMENT_PP} pp (HTA rounds its percentages to two "
        "decimals).",
        "",
        "## Where the time goes",
        "",
        "| input | tool | runs (wall s) | CPU s (median) | peak RSS sampled over the process "
        "tree MiB | processes | phases s (last run) |",
        "|---|---|---|---:|---:|---:|---|",
    ]
    for name, row in results["inputs"].items():
        for tool in ("ours", "hta"):
            runs = row[tool]["runs"]
            walls = ", ".join(str(run["wall_s"]) for run in runs)
            phases = runs[-1].get("phases_s", "") if runs else ""
            if phases:
                phases = ", ".join(f"{key} {value}" for key, value in phases.items())
            lines.append(
                f"| {name} | {tool} | {walls} | {_fmt(row[tool]['cpu_s'])} | "
                f"{_fmt(row[tool]['sampled_tree_peak_rss_mib'])} | "
                f"{max((run['processes'] for run in runs), default='-')} | {phases} |"
            )
    library = results.get("library_call")
    if library:
        lines += [
            "",
            "In-process `jobs.domain.traces.analyze_traces` (no interpreter start, no JSON "
            "report), median of "
            + ", ".join(f"{name} {value['median_s']} s" for name, value in library.items())
            + ".",
        ]
    return "\n".join(lines) + "\n"


def _fmt(value: object, style: str = "") -> str:
    if value is None:
        return "-"
    if style == "x":
        return f"{value}x"
    if style == ",":
        return f"{value:,.0f}"
    return str(value)


# --------------------------------------------------------------------------------------------
# Main


def library_timing(paths: list[Path], runs: int) -> dict:
    """Child mode --time-library: analyze_traces in-process, median of runs."""
    sys.path.insert(0, str(ROOT))
    from jobs.domain.traces import analyze_traces

    times = []
    for _ in range(runs):
        started = time.perf_counter()
        analyze_traces(paths, max_decompressed_bytes=MAX_DECOMPRESSED_BYTES)
        times.append(time.perf_counter() - started)
    return {"median_s": round(statistics.median(times), 3), "runs_s": [round(t, 3) for t in times]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per tool and input")
    parser.add_argument(
        "--events", type=int, default=1_000_000, help="minimum events of the synthetic trace"
    )
    parser.add_argument(
        "--max-seconds",
        type=float,
        default=1200,
        help="hard cap on the timed runs (the one-time HTA install is not counted)",
    )
    parser.add_argument("--hta-venv", type=Path, default=HTA_VENV)
    parser.add_argument("--skip-library", action="store_true", help="no in-process timing")
    parser.add_argument("--setup-only", action="store_true", help="create .venv-hta and stop")
    parser.add_argument(
        "--output", type=Path, default=RESULTS_DIR / "trace_vs_hta.json", help="JSON results"
    )
    # Child modes, used by the benchmark itself.
    parser.add_argument("--describe", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--make-synthetic", nargs=2, type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--time-library", nargs="+", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.describe:
        print(json.dumps(describe_trace(args.describe)))
        return
    if args.make_synthetic:
        print(json.dumps(write_synthetic(*args.make_synthetic, min_events=args.events)))
        return
    if args.time_library:
        print(json.dumps(library_timing(args.time_library, args.repeats)))
        return

    venv = args.hta_venv.resolve()
    setup = ensure_hta_venv(venv)
    if args.setup_only:
        print(json.dumps(setup))
        return

    now = time.monotonic
    deadline = now() + args.max_seconds
    results: dict = {
        "machine": machine_info(),
        "python_ours": subprocess.run(
            [str(PYTHON), "-c", "import platform; print(platform.python_version())"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip(),
        "hta_setup": setup,
        "repeats": args.repeats,
        "goals": {"speedup_min": SPEEDUP_GOAL, "memory_ratio_max": MEMORY_RATIO_GOAL},
        "inputs": {},
    }
    workdir = Path(tempfile.mkdtemp(prefix="gpu-advisor-trace-bench-"))
    try:
        driver = workdir / "hta_driver.py"
        driver.write_text(HTA_DRIVER)
        synthetic = workdir / "rank-1.synthetic.pt.trace.json.gz"
        print(f"Writing the synthetic trace ({args.events:,}+ events) to {synthetic}")
        made = child_json(
            ["--make-synthetic", str(SAMPLE), str(synthetic), "--events", str(args.events)],
            timeout=max(1.0, deadline - now()),
        )
        inputs = {
            "sample (df_index_resolver)": (SAMPLE, {}),
            f"synthetic ({made['copies']} copies of the sample)": (synthetic, made),
        }
        # One untimed run of each tool first, so that no timed run pays for a cold start.
        print("Warming up (one untimed run of each tool on the sample)", flush=True)
        results["warmup_wall_s"] = {
            "ours": run_ours(SAMPLE, timeout=deadline - now(), workdir=workdir)["wall_s"],
            "hta": run_hta(
                SAMPLE, venv=venv, driver=driver, timeout=deadline - now(), workdir=workdir
            )["wall_s"],
        }
        for name, (path, extra) in inputs.items():
            info = child_json(["--describe", str(path)], timeout=max(1.0, deadline - now()))
            entry: dict = {
                "file": str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name,
                "events": info["events"],
                "file_mib": round(path.stat().st_size / MIB, 2),
                "trace": info,
                **({"synthetic": extra} if extra else {}),
                "ours": {"runs": []},
                "hta": {"runs": []},
            }
            results["inputs"][name] = entry
            for repeat in range(args.repeats):
                for tool in ("ours", "hta") if repeat % 2 == 0 else ("hta", "ours"):
                    remaining = deadline - now()
                    if remaining <= 1:
                        results["truncated_by_time_cap"] = True
                        break
                    print(f"  {name}: {tool}, run {repeat + 1} of {args.repeats}", flush=True)
                    if tool == "ours":
                        run = run_ours(path, timeout=remaining, workdir=workdir)
                    else:
                        run = run_hta(
                            path, venv=venv, driver=driver, timeout=remaining, workdir=workdir
                        )
                        results["hta_versions"] = run.get("versions", results.get("hta_versions"))
                    entry[tool]["runs"].append(run)
                    if run["ranks"] is None:
                        print(f"    failed (exit {run['exit_code']}): {run['stderr_tail'][-500:]}")
            for tool in ("ours", "hta"):
                runs = entry[tool]["runs"]
                for key in ("wall_s", "peak_rss_mib", "sampled_tree_peak_rss_mib", "cpu_s"):
                    entry[tool][key] = median_of(runs, key)
                entry[tool]["ranks"] = next(
                    (run["ranks"] for run in runs if run["ranks"] is not None), None
                )
            ours, hta = entry["ours"], entry["hta"]
            both = ours["wall_s"] and hta["wall_s"]
            entry["speedup"] = round(hta["wall_s"] / ours["wall_s"], 2) if both else None
            entry["speedup_cpu_time"] = (
                round(hta["cpu_s"] / ours["cpu_s"], 2) if ours["cpu_s"] and hta["cpu_s"] else None
            )
            entry["memory_ratio"] = (
                round(ours["peak_rss_mib"] / hta["peak_rss_mib"], 3)
                if ours["peak_rss_mib"] and hta["peak_rss_mib"]
                else None
            )
            entry["idle_by_rank"] = compare_idle(ours["ranks"], hta["ranks"])
        if not args.skip_library and deadline - now() > 60:
            results["library_call"] = {}
            for name, (path, _) in inputs.items():
                try:
                    results["library_call"][name] = child_json(
                        ["--time-library", str(path), "--repeats", str(args.repeats)],
                        timeout=max(1.0, deadline - now()),
                    )
                except subprocess.TimeoutExpired:
                    results["truncated_by_time_cap"] = True
                    break
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    entries = results["inputs"].values()
    goals = results["goals"]
    goals["speedup_met"] = bool(entries) and all(
        (entry["speedup"] or 0) >= SPEEDUP_GOAL for entry in entries
    )
    goals["memory_met"] = bool(entries) and all(
        entry["memory_ratio"] is not None and entry["memory_ratio"] <= MEMORY_RATIO_GOAL
        for entry in entries
    )
    rows = [row for entry in entries for row in entry["idle_by_rank"]]
    goals["idle_agrees"] = bool(rows) and all(row.get("agrees", False) for row in rows)
    # A child's ru_maxrss starts from its parent's RSS at spawn; this one's is kept small.
    results["machine"]["bench_process_peak_rss_mib"] = round(
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1
    )

    write_results(args.output, results, markdown)


if __name__ == "__main__":
    main()
