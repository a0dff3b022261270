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
   by repeating that sample's events in time (see ``trace_synth.write_synthetic``), written
   gzipped and streamed, event by event.
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
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hta_venv import ensure_hta_venv
from machine import PYTHON, RESULTS_DIR, ROOT, git_revision, machine_at_start, write_results
from options import Option, options_parser
from procfs import MIB
from trace_report import compare_idle, markdown, median_of
from trace_synth import describe_trace, write_synthetic
from trace_tools import HTA_DRIVER, MAX_DECOMPRESSED_BYTES, run_hta, run_ours

HTA_VENV = ROOT / ".venv-hta"
SAMPLE = ROOT / "tests/fixtures/traces/hta/tests/data/df_index_resolver/df_index_resolver.json.gz"
SPEEDUP_GOAL = 5.0
MEMORY_RATIO_GOAL = 0.1


def machine_info() -> dict:
    try:
        total_memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        total_memory = 0
    return {
        **machine_at_start(),
        "memory_gib": round(total_memory / 2**30, 1),
        "platform": platform.platform(),
        "python_bench": platform.python_version(),
        "git_revision": git_revision(),
    }


def child_json(args: list[str], timeout: float) -> dict:
    """Run this script in one of its child modes (--describe, --make-synthetic,
    --time-library) and read the JSON it prints."""
    completed = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    )
    return json.loads(completed.stdout)


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


OPTIONS: tuple[Option, ...] = (
    ("--repeats", 3, "timed runs per tool and input"),
    ("--events", 1_000_000, "minimum events of the synthetic trace"),
    (
        "--max-seconds",
        1200.0,
        "hard cap on the timed runs (the one-time HTA install is not counted)",
    ),
    ("--hta-venv", HTA_VENV, None),
    ("--skip-library", False, "no in-process timing"),
    ("--setup-only", False, "create .venv-hta and stop"),
    ("--output", RESULTS_DIR / "trace_vs_hta.json", "JSON results"),
)


def main() -> None:
    parser = options_parser(__doc__, OPTIONS)
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
