"""A bounded load run against one real server: the sizing API, a catalogue list and a page.

Run from the repository root:

    .venv/bin/python bench/load.py               # about 1.5 minutes
    .venv/bin/python bench/load.py --help        # duration, request cap, concurrency, --sqlite

One run:

1. Makes a throwaway database: on the machine's PostgreSQL (127.0.0.1:5432, a database of its
   own, dropped at the end) when it answers, else SQLite in a temporary directory; migrates it
   and loads the bundled catalogue. The cache is the machine's Redis (127.0.0.1:6379, database
   13) when it answers, so the throttles pay their real round trips; else the local memory.
2. Starts ``gunicorn config.wsgi:application`` with 2 sync workers on a free port of
   127.0.0.1 (DEBUG off, throttles at 1,000,000 per second: counted, never a 429).
3. For each target in turn, ``--concurrency`` client threads (httpx, 8 by default) send
   requests for ``--seconds`` (20 by default) or until ``--max-requests`` were sent:

   - sizing: POST /api/v1/advice/sizing (serve Llama 3.1 70B, 8k context, 16 users),
   - catalogue: GET /api/v1/gpus/ (the first page of the GPU list),
   - page: GET / (the server-rendered GPU catalogue).

Reported per target: throughput, latency p50/p99 (client side, connection set-up included),
status counts and errors; and each gunicorn worker's resident memory (from /proc/<pid>/statm,
the kernel's VmRSS) before the first and after the last target. Results go to
bench/results/load.json and bench/results/load.md. Only loopback traffic.
"""

import argparse
import json
import secrets
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from gunicorn_server import HOST, Server, prepare_database, server_env, throwaway_workdir
from http_load import Send, drive
from latency import latency_ms
from machine import RESULTS_DIR, machine_info, write_results
from options import Option, options_parser
from procfs import child_pids, rss_mib
from sizing_requests import SIZING_BODY, SIZING_PATH

POSTGRES = ("127.0.0.1", 5432)
REDIS = ("127.0.0.1", 6379)
REDIS_DB = 13
TARGETS = {
    "sizing": ("POST", SIZING_PATH, SIZING_BODY),
    "catalogue": ("GET", "/api/v1/gpus/", None),
    "page": ("GET", "/", None),
}


def answers(address: tuple[str, int]) -> bool:
    try:
        with socket.create_connection(address, timeout=1):
            return True
    except OSError:
        return False


def redis_answers() -> bool:
    try:
        with socket.create_connection(REDIS, timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class PostgresDatabase:
    """A database of the bench's own on the machine's PostgreSQL, dropped afterwards."""

    def __init__(self) -> None:
        self.name = f"gpa_bench_{secrets.token_hex(4)}"
        self.admin_url = f"postgresql://postgres@{POSTGRES[0]}:{POSTGRES[1]}/postgres"

    def _run(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True, connect_timeout=5) as connection:
            connection.execute(sql)

    def create(self) -> str:
        self._run(f'CREATE DATABASE "{self.name}"')
        return f"postgres://postgres@{POSTGRES[0]}:{POSTGRES[1]}/{self.name}"

    def drop(self) -> None:
        self._run(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


def workers_rss(master_pid: int) -> dict[str, float]:
    return {str(pid): rss_mib(pid) for pid in sorted(child_pids(master_pid))}


def run_target(
    port: int, method: str, path: str, body: dict | None, args: argparse.Namespace
) -> dict:
    """`args.concurrency` threads, each with its own client, until the time or request cap."""
    deadline = time.monotonic() + args.seconds

    @contextmanager
    def sender() -> Iterator[Send]:
        with httpx.Client(base_url=f"http://{HOST}:{port}", timeout=args.timeout) as client:

            def send() -> tuple[int, int]:
                response = client.request(method, path, json=body)
                return response.status_code, len(response.content)

            yield send

    phase = drive(
        sender,
        requests=args.max_requests,
        concurrency=args.concurrency,
        deadline=deadline,
        failures=(httpx.HTTPError,),
    )
    not_ok = sum(count for code, count in phase.statuses.items() if code >= 400)
    return {
        "method": method,
        "path": path,
        "requests_sent": phase.issued,
        "wall_s": round(phase.wall, 2),
        "throughput_rps": round(len(phase.latencies) / phase.wall, 1) if phase.wall else 0.0,
        "latency_ms": latency_ms(phase.latencies, digits=1),
        "status_counts": {str(code): count for code, count in sorted(phase.statuses.items())},
        "errors": len(phase.errors) + not_ok,
        "error_samples": phase.errors[:5],
    }


def markdown(results: dict) -> str:
    run, machine = results["run"], results["machine"]
    lines = [
        f"Load run: {run['server']}; {run['concurrency']} client threads, {run['seconds']} s "
        f"per target (at most {run['max_requests']} requests); {run['database']}, {run['cache']}.",
        f"Machine: {machine['cpus_usable']} CPUs ({machine['cpu_model']}), load average "
        f"{machine['load_average_at_start'][0]} at the start and "
        f"{machine['load_average_at_end'][0]} at the end; revision {machine['git_revision']}.",
        "",
        "| target | request | requests/s | p50 ms | p99 ms | errors |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for name, target in results["targets"].items():
        latency = target["latency_ms"] or {"p50": "-", "p99": "-"}
        lines.append(
            f"| {name} | {target['method']} {target['path']} | {target['throughput_rps']} | "
            f"{latency['p50']} | {latency['p99']} | {target['errors']} |"
        )
    before, after = results["worker_rss_mib"]["before"], results["worker_rss_mib"]["after"]
    lines += [
        "",
        "| gunicorn worker | RSS before (MiB) | RSS after (MiB) |",
        "| --- | ---: | ---: |",
    ]
    for pid in before:
        lines.append(f"| {pid} | {before[pid]} | {after.get(pid, 'gone')} |")
    lines += ["", f"Server tracebacks in the log: {results['server_tracebacks']}."]
    return "\n".join(lines) + "\n"


def load_run(
    workdir: Path, postgres: PostgresDatabase | None, results: dict, args: argparse.Namespace
) -> None:
    """Set the database up, start the server, run every target; fills `results` in."""
    env = server_env(workdir)
    env.update(
        {
            "THROTTLE_ANON": "1000000/s",
            "THROTTLE_USER": "1000000/s",
            "THROTTLE_TEAM": "1000000/s",
        }
    )
    if postgres:
        env["DATABASE_URL"] = postgres.create()
    if redis_answers():
        env["CACHE_URL"] = f"redis://{REDIS[0]}:{REDIS[1]}/{REDIS_DB}"
    results["setup"] = prepare_database(env)
    results["run"] = {
        "server": f"gunicorn, {args.workers} sync workers, on {HOST}, DEBUG=0",
        "database": "PostgreSQL" if postgres else "SQLite",
        "cache": "Redis" if "CACHE_URL" in env else "local memory",
        "concurrency": args.concurrency,
        "seconds": args.seconds,
        "max_requests": args.max_requests,
    }
    server = Server(env, workdir, args.workers)
    try:
        server.wait_ready()
        for method, path, body in TARGETS.values():
            response = httpx.request(method, f"http://{HOST}:{server.port}{path}", json=body)
            if response.status_code != 200:
                sys.exit(f"{method} {path} answered {response.status_code}")
        before = workers_rss(server.process.pid)
        results["targets"] = {
            name: run_target(server.port, method, path, body, args)
            for name, (method, path, body) in TARGETS.items()
        }
        results["worker_rss_mib"] = {"before": before, "after": workers_rss(server.process.pid)}
    finally:
        server.stop()
    results["server_tracebacks"] = server.tracebacks()


OPTIONS: tuple[Option, ...] = (
    ("--seconds", 20.0, "duration per target"),
    ("--max-requests", 20_000, "cap per target"),
    ("--concurrency", 8, "client threads"),
    ("--workers", 2, "gunicorn sync workers"),
    ("--timeout", 30.0, "per request, seconds"),
    ("--sqlite", False, "SQLite even if PostgreSQL answers"),
    ("--output", RESULTS_DIR / "load.json", "JSON results file"),
)


def main() -> None:
    args = options_parser(__doc__, OPTIONS).parse_args()

    postgres = None if args.sqlite or not answers(POSTGRES) else PostgresDatabase()
    results: dict = {"machine": machine_info()}
    try:
        with throwaway_workdir("gpu-advisor-load-") as workdir:
            load_run(workdir, postgres, results, args)
    finally:
        if postgres:
            postgres.drop()
    write_results(args.output, results, markdown)
    print(json.dumps(results["targets"], indent=2))


if __name__ == "__main__":
    main()
