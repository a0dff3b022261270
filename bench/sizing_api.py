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
import json
import sys
import time
from contextlib import nullcontext
from pathlib import Path

from gunicorn_server import HOST, Server, prepare_database, request, server_env, throwaway_workdir
from http_load import Phase, drive
from latency import latency_ms
from machine import RESULTS_DIR, machine_info, write_results
from options import Option, options_parser
from sizing_engine import engine_benchmark
from sizing_requests import BASELINE_PATH, SIZING_BODY, SIZING_PATH

THROUGHPUT_RATIO_GOAL = 0.5


def burst(
    port: int,
    method: str,
    path: str,
    body: bytes | None,
    *,
    requests: int,
    concurrency: int,
    deadline: float,
) -> Phase:
    """`requests` requests from `concurrency` threads, each on a fresh connection; stops early
    at `deadline`."""

    def send() -> tuple[int, int]:
        status, payload = request(method, port, path, body)
        return status, len(payload)

    return drive(
        lambda: nullcontext(send),
        requests=requests,
        concurrency=concurrency,
        deadline=deadline,
        failures=(OSError,),
    )


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
        "latency_ms": latency_ms(latencies, digits=2, mean=True),
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
                    burst(
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
    tracebacks = server.tracebacks()
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
        drf = engine["sizing_request_breakdown"]["render_json_drf_renderer"]
        lines += [
            "",
            f"The same answer through DRF's own JSONRenderer (the API's before "
            f"config/renderers.py): {drf['median_ms']} ms median ({drf['p95_ms']} ms p95).",
        ]
        reload = engine["catalogue_reload_after_a_write"]
        lines += [
            "",
            "Once per process, and again after any catalogue write: reading the GPUs and "
            f"offers into dataclasses, {reload['median_ms']} ms median "
            f"({reload['p95_ms']} ms p95).",
        ]
    return "\n".join(lines) + "\n"


OPTIONS: tuple[Option, ...] = (
    ("--requests", 300, "timed requests per endpoint"),
    ("--warmup", 20, "untimed requests per endpoint"),
    ("--concurrency", 4, "client threads"),
    ("--rounds", 3, "alternating baseline/sizing rounds"),
    ("--workers", 2, "gunicorn workers"),
    ("--engine-runs", 50, "runs per engine workload"),
    ("--http-max-seconds", 300.0, "hard cap on the HTTP phase (stops issuing requests past it)"),
    ("--skip-http", False, None),
    ("--skip-engine", False, None),
    ("--output", RESULTS_DIR / "sizing_api.json", "JSON results file"),
)


def main() -> None:
    args = options_parser(__doc__, OPTIONS).parse_args()

    results: dict = {"machine": machine_info()}
    with throwaway_workdir("gpu-advisor-bench-") as workdir:
        env = server_env(workdir)
        results["setup"] = prepare_database(env)
        if not args.skip_http:
            results["http"] = http_benchmark(env, workdir, args)
        if not args.skip_engine:
            results["engine"] = engine_benchmark(env, args.engine_runs)

    write_results(args.output, results, markdown)


if __name__ == "__main__":
    main()
