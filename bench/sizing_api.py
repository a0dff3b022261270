"""Benchmark of the sizing API and of the sizing engine alone.

Run from the repository root:

    .venv/bin/python bench/sizing_api.py

One run does, in order:

1. Makes a throwaway SQLite database in a temporary directory (``manage.py migrate`` and
   ``manage.py load_catalog``), so the project's own ``var/`` database is never touched.
2. Starts one real server on loopback (``gunicorn config.wsgi:application --workers 2`` on a
   free port of 127.0.0.1, DEBUG off, throttling raised out of the way) and measures
   throughput and p50/p99 latency of

   - POST /api/v1/advice/sizing with a realistic body (serve Llama 3.1 70B, 8k context,
     16 users), and
   - GET /api/v1/gpus/H100-SXM/, a small DRF detail view, as the baseline of what any DRF
     request costs on the same server;

   and reports sizing throughput / baseline throughput (the product's goal: >= 0.5).
3. Stops the server and times the engine in-process: ``recommend()`` over the whole catalogue
   (every GPU at 1, 2, 4 and 8 GPUs, with offers) for four representative workloads (goal:
   well under 50 ms), plus a breakdown of what else a sizing request does (validation, the
   catalogue queries, the report).

Results go to bench/results/sizing_api.json and bench/results/sizing_api.md; a table is
printed. Only loopback traffic; no new dependencies (http.client and threads).
"""

import argparse
import http.client
import json
import os
import platform
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from machine import cpu_model, git_revision, write_results

ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = ROOT / "bench" / "results"
PYTHON = ROOT / ".venv" / "bin" / "python"
GUNICORN = ROOT / ".venv" / "bin" / "gunicorn"
HOST = "127.0.0.1"

SIZING_PATH = "/api/v1/advice/sizing"
SIZING_BODY = {
    "model": "llama-3.1-70b",
    "task": "inference",
    "context_tokens": 8192,
    "concurrent_users": 16,
}
BASELINE_PATH = "/api/v1/gpus/H100-SXM/"
THROUGHPUT_RATIO_GOAL = 0.5
ENGINE_GOAL_MS = 50.0

# The engine workloads, as API request bodies (built through the same serializer).
ENGINE_WORKLOADS = {
    "70B inference (8k ctx, 16 users)": SIZING_BODY,
    "8B LoRA (4k ctx, micro-batch 4)": {
        "model": "llama-3.1-8b",
        "task": "lora",
        "context_tokens": 4096,
        "batch_size": 4,
    },
    "70B QLoRA (4k ctx)": {"model": "llama-3.1-70b", "task": "qlora", "context_tokens": 4096},
    "405B full training (fits nowhere: remedies sized)": {
        "model": "llama-3.1-405b",
        "task": "full",
        "context_tokens": 4096,
    },
}


# --------------------------------------------------------------------------------------------
# Small helpers


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile (no interpolation): a value that was actually measured."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(pct / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def machine_info() -> dict:
    try:
        usable_cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        usable_cpus = os.cpu_count()
    return {
        "date_utc": datetime.now(UTC).isoformat(timespec="seconds"),
        "load_average_at_start": [round(value, 2) for value in os.getloadavg()],
        "cpu_count": os.cpu_count(),
        "cpus_usable": usable_cpus,
        "cpu_model": cpu_model(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "git_revision": git_revision(),
    }


# --------------------------------------------------------------------------------------------
# The throwaway database and the server


def server_env(workdir: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        # Anything that would point the server at another database, cache or broker.
        if key not in {"DATABASE_URL", "CACHE_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE"}
    }
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DEBUG": "0",
            "HTTPS": "0",
            "SECRET_KEY": secrets.token_urlsafe(50),
            "ALLOWED_HOSTS": HOST,
            "THROTTLE_ANON": "1000000/min",
            "THROTTLE_USER": "1000000/min",
            "THROTTLE_TEAM": "1000000/min",
            "VAR_DIR": str(workdir),
            "DATABASE_URL": f"sqlite:///{workdir / 'bench.sqlite3'}",
            "LOG_LEVEL": "WARNING",
        }
    )
    return env


def prepare_database(env: dict[str, str]) -> dict:
    timings = {}
    for name, args in (
        ("migrate_s", ["migrate", "--no-input"]),
        ("load_catalog_s", ["load_catalog"]),
    ):
        started = time.perf_counter()
        done = subprocess.run(
            [str(PYTHON), "manage.py", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if done.returncode:
            sys.exit(
                f"manage.py {' '.join(args)} failed:\n{done.stdout[-2000:]}{done.stderr[-4000:]}"
            )
        timings[name] = round(time.perf_counter() - started, 2)
    return timings


def request(
    method: str, port: int, path: str, body: bytes | None = None, timeout: float = 30.0
) -> tuple[int, bytes]:
    """One request on a fresh connection (gunicorn's sync workers close after each response)."""
    connection = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


class Server:
    def __init__(self, env: dict[str, str], workdir: Path, workers: int) -> None:
        self.port = free_port()
        self.log_path = workdir / "gunicorn.log"
        self._log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            [
                str(GUNICORN),
                "config.wsgi:application",
                "--bind",
                f"{HOST}:{self.port}",
                "--workers",
                str(workers),
                "--error-logfile",
                "-",
            ],
            cwd=ROOT,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                sys.exit(f"gunicorn exited early:\n{self.log_tail()}")
            try:
                status, _ = request("GET", self.port, "/healthz", timeout=5)
                if status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        sys.exit(f"gunicorn did not answer /healthz within {timeout:.0f} s:\n{self.log_tail()}")

    def log_tail(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self._log.close()


# --------------------------------------------------------------------------------------------
# HTTP load


class Phase:
    """What one burst of requests to one endpoint measured."""

    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.statuses: dict[int, int] = {}
        self.errors: list[str] = []
        self.response_bytes = 0
        self.wall = 0.0
        self.planned = 0


def load(
    port: int,
    method: str,
    path: str,
    body: bytes | None,
    *,
    requests: int,
    concurrency: int,
    deadline: float,
) -> Phase:
    """`requests` requests from `concurrency` threads; stops early at `deadline`."""
    lock = threading.Lock()
    issued = 0
    phase = Phase()
    phase.planned = requests

    def worker() -> None:
        nonlocal issued
        while True:
            with lock:
                if issued >= requests or time.monotonic() > deadline:
                    return
                issued += 1
            started = time.perf_counter()
            try:
                status, payload = request(method, port, path, body)
            except OSError as error:
                with lock:
                    phase.errors.append(f"{type(error).__name__}: {error}")
                continue
            elapsed = time.perf_counter() - started
            with lock:
                phase.latencies.append(elapsed)
                phase.statuses[status] = phase.statuses.get(status, 0) + 1
                phase.response_bytes = len(payload)

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        for future in [pool.submit(worker) for _ in range(concurrency)]:
            future.result()
    phase.wall = time.perf_counter() - started
    return phase


def summarize(method: str, path: str, phases: list[Phase], concurrency: int) -> dict:
    latencies = [value for phase in phases for value in phase.latencies]
    statuses: dict[int, int] = {}
    for phase in phases:
        for code, count in phase.statuses.items():
            statuses[code] = statuses.get(code, 0) + count
    errors = [error for phase in phases for error in phase.errors]
    planned = sum(phase.planned for phase in phases)
    wall = sum(phase.wall for phase in phases)
    done = len(latencies)
    return {
        "method": method,
        "path": path,
        "requests_planned": planned,
        "requests_completed": done,
        "truncated_by_time_cap": done + len(errors) < planned,
        "concurrency": concurrency,
        "status_counts": {str(code): count for code, count in sorted(statuses.items())},
        "errors": errors[:5],
        "error_count": len(errors),
        "response_bytes": phases[-1].response_bytes if phases else 0,
        "wall_s": round(wall, 3),
        "throughput_rps": round(done / wall, 2) if wall else 0.0,
        "throughput_rps_per_round": [
            round(len(phase.latencies) / phase.wall, 2) if phase.wall else 0.0 for phase in phases
        ],
        "latency_ms": {
            "p50": round(percentile(latencies, 50) * 1000, 2),
            "p99": round(percentile(latencies, 99) * 1000, 2),
            "mean": round(statistics.fmean(latencies) * 1000, 2),
            "max": round(max(latencies) * 1000, 2),
        }
        if latencies
        else None,
    }


def http_benchmark(env: dict[str, str], workdir: Path, args: argparse.Namespace) -> dict:
    deadline = time.monotonic() + args.http_max_seconds
    server = Server(env, workdir, args.workers)
    try:
        server.wait_ready()
        sizing_body = json.dumps(SIZING_BODY).encode()
        # Both endpoints must answer correctly before anything is timed.
        for method, path, body in (
            ("GET", BASELINE_PATH, None),
            ("POST", SIZING_PATH, sizing_body),
        ):
            status, payload = request(method, server.port, path, body, timeout=60)
            if status != 200:
                sys.exit(f"{method} {path} answered {status}:\n{payload[:2000]!r}")
        check = json.loads(request("POST", server.port, SIZING_PATH, sizing_body)[1])
        candidates = len(check["candidates"])
        endpoints = {
            "baseline": ("GET", BASELINE_PATH, None),
            "sizing": ("POST", SIZING_PATH, sizing_body),
        }
        for method, path, body in endpoints.values():
            for _ in range(args.warmup):
                request(method, server.port, path, body)
        # Alternating rounds, so that a change in the machine's load hits both endpoints.
        phases: dict[str, list[Phase]] = {name: [] for name in endpoints}
        for round_index in range(args.rounds):
            share = args.requests // args.rounds + (round_index < args.requests % args.rounds)
            for name, (method, path, body) in endpoints.items():
                phases[name].append(
                    load(
                        server.port,
                        method,
                        path,
                        body,
                        requests=share,
                        concurrency=args.concurrency,
                        deadline=deadline,
                    )
                )
        results = {
            name: summarize(method, path, phases[name], args.concurrency)
            for name, (method, path, body) in endpoints.items()
        }
    finally:
        server.stop()
    tracebacks = server.log_path.read_text(errors="replace").count("Traceback")
    baseline, sizing = results["baseline"]["throughput_rps"], results["sizing"]["throughput_rps"]
    ratio = round(sizing / baseline, 3) if baseline else None
    return {
        "server": (
            f"gunicorn {args.workers} sync workers on {HOST}, DEBUG=0, SQLite, "
            "locmem cache (throttle counters per worker)"
        ),
        "sizing_body": SIZING_BODY,
        "sizing_candidates_in_response": candidates,
        "warmup_requests_each": args.warmup,
        "rounds": args.rounds,
        "throughput_ratio_per_round": [
            round(sizing_round / baseline_round, 3) if baseline_round else None
            for baseline_round, sizing_round in zip(
                results["baseline"]["throughput_rps_per_round"],
                results["sizing"]["throughput_rps_per_round"],
                strict=True,
            )
        ],
        "baseline": results["baseline"],
        "sizing": results["sizing"],
        "throughput_ratio_sizing_over_baseline": ratio,
        "throughput_ratio_goal": THROUGHPUT_RATIO_GOAL,
        "meets_goal": ratio is not None and ratio >= THROUGHPUT_RATIO_GOAL,
        "server_tracebacks": tracebacks,
    }


# --------------------------------------------------------------------------------------------
# The engine in-process


def timed(function: Callable[[], object], runs: int) -> dict:
    durations = []
    for _ in range(runs):
        started = time.perf_counter()
        function()
        durations.append(time.perf_counter() - started)
    return {
        "runs": runs,
        "median_ms": round(statistics.median(durations) * 1000, 3),
        "p95_ms": round(percentile(durations, 95) * 1000, 3),
        "min_ms": round(min(durations) * 1000, 3),
        "max_ms": round(max(durations) * 1000, 3),
    }


def engine_benchmark(env: dict[str, str], args: argparse.Namespace) -> dict:
    for key in ("DATABASE_URL", "VAR_DIR", "SECRET_KEY", "HTTPS", "DJANGO_SETTINGS_MODULE"):
        os.environ[key] = env[key]
    os.environ["DEBUG"] = "1"
    os.environ.pop("CACHE_URL", None)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    # Imports that need Django set up first.
    from django.db import connection, reset_queries
    from rest_framework.renderers import JSONRenderer

    from advisor.api.serializers import SizingRequestSerializer
    from advisor.domain.sizing.recommend import rank_candidates, recommend
    from advisor.domain.sizing.report import sizing_report
    from advisor.selectors import device_list, device_offers_list

    devices = device_list()
    offers = device_offers_list(pricing_model="on_demand")
    reset_queries()
    device_list(), device_offers_list(pricing_model="on_demand")
    catalogue_queries = len(connection.queries)  # DEBUG=1 records them
    offer_count = sum(len(rows) for rows in offers.values())
    runs = args.engine_runs

    def validated(body: dict):
        serializer = SizingRequestSerializer(data=body)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data["workload"]

    workloads = {}
    for name, body in ENGINE_WORKLOADS.items():
        workload = validated(body)
        result = recommend(workload, devices, offers)
        ranked = timed(lambda w=workload: rank_candidates(w, devices, offers), runs)
        full = timed(lambda w=workload: recommend(w, devices, offers), runs)
        workloads[name] = {
            "request_body": body,
            "candidates": len(result.candidates),
            "fitting": len(result.fitting),
            "remedies_sized": len(result.remedies),
            "recommend": full,
            "rank_candidates_only": ranked,
            "meets_goal": full["p95_ms"] < ENGINE_GOAL_MS,
        }

    # What else one sizing request does besides the engine (the API's request path).
    api_workload = validated(SIZING_BODY)
    api_result = recommend(api_workload, devices, offers)
    report = sizing_report(api_result)
    breakdown = {
        "validate_request (serializer, model config parse)": timed(
            lambda: validated(SIZING_BODY), runs
        ),
        "load_devices_and_offers (ORM rows to dataclasses)": timed(
            lambda: (device_list(), device_offers_list(pricing_model="on_demand")), runs
        ),
        "recommend": timed(lambda: recommend(api_workload, devices, offers), runs),
        "sizing_report (dict of the answer)": timed(lambda: sizing_report(api_result), runs),
        "render_json (DRF JSONRenderer)": timed(lambda: JSONRenderer().render(report), runs),
    }
    return {
        "settings": "in-process, DEBUG=1, the same throwaway SQLite database",
        "devices": len(devices),
        "gpu_counts": [1, 2, 4, 8],
        "offers_on_demand": offer_count,
        "queries_per_catalogue_load": catalogue_queries,
        "goal_ms": ENGINE_GOAL_MS,
        "workloads": workloads,
        "sizing_request_breakdown": {
            "request_body": SIZING_BODY,
            "steps": breakdown,
            "sum_of_medians_ms": round(sum(step["median_ms"] for step in breakdown.values()), 3),
        },
    }


# --------------------------------------------------------------------------------------------
# Output


def markdown(results: dict) -> str:
    machine = results["machine"]
    lines = [
        "# Sizing API benchmark",
        "",
        f"{machine['date_utc']}, {machine['cpus_usable']} CPUs usable ({machine['cpu_model']}), "
        f"Python {machine['python']}, revision {machine['git_revision']}; load average "
        f"{machine['load_average_at_start'][0]} at start, "
        f"{machine.get('load_average_at_end', ['?'])[0]} at end.",
        "Produced by `.venv/bin/python bench/sizing_api.py`; see bench/README.md.",
        "",
    ]
    http = results.get("http")
    if http:
        lines += [
            f"## HTTP ({http['server']})",
            "",
            "| endpoint | requests | concurrency | req/s | p50 ms | p99 ms | statuses |",
            "|---|---:|---:|---:|---:|---:|---|",
        ]
        for name in ("baseline", "sizing"):
            row = http[name]
            latency = row["latency_ms"] or {"p50": "-", "p99": "-"}
            lines.append(
                f"| {name}: {row['method']} {row['path']} | {row['requests_completed']} | "
                f"{row['concurrency']} | {row['throughput_rps']} | {latency['p50']} | "
                f"{latency['p99']} | {row['status_counts']} |"
            )
        lines += [
            "",
            "Throughput ratio sizing / baseline: "
            f"**{http['throughput_ratio_sizing_over_baseline']}** "
            f"(goal >= {http['throughput_ratio_goal']}: "
            f"{'met' if http['meets_goal'] else 'NOT met'}); per round "
            f"{http['throughput_ratio_per_round']} ({http['rounds']} alternating rounds).",
            "",
        ]
    engine = results.get("engine")
    if engine:
        lines += [
            f"## Engine in-process ({engine['devices']} GPUs × counts {engine['gpu_counts']}, "
            f"{engine['offers_on_demand']} on-demand offers, "
            f"{engine['queries_per_catalogue_load']} queries to load them)",
            "",
            "| workload | candidates | fitting | remedies | recommend median ms | p95 ms | "
            "rank only median ms |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for name, row in engine["workloads"].items():
            lines.append(
                f"| {name} | {row['candidates']} | {row['fitting']} | {row['remedies_sized']} | "
                f"{row['recommend']['median_ms']} | {row['recommend']['p95_ms']} | "
                f"{row['rank_candidates_only']['median_ms']} |"
            )
        lines += [
            "",
            f"Goal: recommend well under {engine['goal_ms']:.0f} ms.",
            "",
            "### Where a sizing request's time goes (in-process, medians)",
            "",
            "| step | median ms | p95 ms |",
            "|---|---:|---:|",
        ]
        for name, row in engine["sizing_request_breakdown"]["steps"].items():
            lines.append(f"| {name} | {row['median_ms']} | {row['p95_ms']} |")
        lines.append(f"| sum | {engine['sizing_request_breakdown']['sum_of_medians_ms']} | |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=300, help="timed requests per endpoint")
    parser.add_argument("--warmup", type=int, default=20, help="untimed requests per endpoint")
    parser.add_argument("--concurrency", type=int, default=4, help="client threads")
    parser.add_argument("--rounds", type=int, default=3, help="alternating baseline/sizing rounds")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    parser.add_argument("--engine-runs", type=int, default=50, help="runs per engine workload")
    parser.add_argument(
        "--http-max-seconds",
        type=float,
        default=300,
        help="hard cap on the HTTP phase (stops issuing requests past it)",
    )
    parser.add_argument("--skip-http", action="store_true")
    parser.add_argument("--skip-engine", action="store_true")
    parser.add_argument(
        "--output", type=Path, default=RESULTS_DIR / "sizing_api.json", help="JSON results file"
    )
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="gpu-advisor-bench-"))
    results: dict = {"machine": machine_info()}
    try:
        env = server_env(workdir)
        results["setup"] = prepare_database(env)
        if not args.skip_http:
            results["http"] = http_benchmark(env, workdir, args)
        if not args.skip_engine:
            results["engine"] = engine_benchmark(env, args)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    write_results(args.output, results, markdown)


if __name__ == "__main__":
    main()
