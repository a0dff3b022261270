"""Request times of this checkout against an earlier revision, side by side in one run.

Run from the repository root:

    .venv/bin/python bench/versus_revision.py --revision 7c6c135

The absolute req/s of bench/load.py and bench/sizing_api.py move with the machine (the same
trivial view has measured 175 to 303 req/s on this project's machines on one day), so a change
is judged against the revision before it, here and now:

1. One throwaway SQLite database, migrated and loaded with the bundled catalogue by this
   checkout (the earlier revision reads it: it ignores the columns and tables it lacks).
2. The revision is checked out with `git worktree add --detach`. A child process per tree
   (bench/revision_timer.py, run from that tree with DEBUG=0 and the throttles opened) sends
   the same requests through Django's test client: the sizing answer, the GPU list, the GPU
   page and a GPU's detail.
3. The two trees alternate for `--rounds` rounds (drift on the machine falls on both); each
   round times `--runs` requests per endpoint after a warm-up. Medians over all runs, and the
   ratio now / before (below 1: faster now).

Writes bench/results/versus_revision.json and .md.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from machine import PYTHON, RESULTS_DIR, ROOT, machine_info, write_results
from options import Option, options_parser

TIMER = Path(__file__).resolve().with_name("revision_timer.py")
CHILD_TIMEOUT_S = 600
OPTIONS: list[Option] = [
    ("--revision", "7c6c135", "the earlier revision to compare with"),
    ("--runs", 40, "timed requests per endpoint per round"),
    ("--rounds", 3, "alternating rounds per tree"),
    ("--output", str(RESULTS_DIR / "versus_revision.json"), "JSON results (the .md beside it)"),
]


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True
    ).stdout.strip()


def _environment(database: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "CACHE_URL"}
    return env | {
        "DEBUG": "0",
        "SECRET_KEY": "bench-" + "x" * 50,
        "DATABASE_URL": f"sqlite:///{database}",
        "HTTPS": "0",
        "ALLOWED_HOSTS": "*",
        "THROTTLE_ANON": "1000000/min",
        "THROTTLE_USER": "1000000/min",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }


def _prepare(database: Path) -> None:
    env = _environment(database) | {"DEBUG": "1"}
    for command in (["migrate", "-v", "0"], ["load_catalog", "-v", "0"]):
        subprocess.run(
            [str(PYTHON), "manage.py", *command],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
            timeout=CHILD_TIMEOUT_S,
        )


def _time_tree(tree: Path, database: Path, runs: int) -> dict[str, list[float]]:
    completed = subprocess.run(
        [str(PYTHON), str(TIMER), str(runs)],
        cwd=tree,
        env=_environment(database),
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT_S,
    )
    if completed.returncode != 0:
        raise SystemExit(f"timing in {tree} failed:\n{completed.stderr[-3000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def _summary(samples: list[float]) -> dict[str, float]:
    return {
        "median_ms": round(statistics.median(samples) * 1000, 2),
        "min_ms": round(min(samples) * 1000, 2),
        "runs": len(samples),
    }


def render(results: dict) -> str:
    lines = [
        "# This checkout against an earlier revision, side by side",
        "",
        f"{results['machine']['date_utc']}, {results['machine']['cpus_usable']} CPUs usable, "
        f"revision {results['machine']['git_revision']} against {results['before']}; "
        f"{results['rounds']} alternating rounds; Django's test client, DEBUG=0, SQLite.",
        "Produced by `.venv/bin/python bench/versus_revision.py`; see bench/README.md.",
        "",
        "| request | before: median (min) ms | now: median (min) ms | now / before |",
        "|---|---:|---:|---:|",
    ]
    for name, row in results["endpoints"].items():
        before, now = row["before"], row["now"]
        lines.append(
            f"| {name} | {before['median_ms']} ({before['min_ms']}) | "
            f"{now['median_ms']} ({now['min_ms']}) | {row['ratio']} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    args = options_parser(__doc__, OPTIONS).parse_args()
    before = _git("rev-parse", args.revision)
    samples: dict[str, dict[str, list[float]]] = {"before": {}, "now": {}}
    with tempfile.TemporaryDirectory(prefix="versus-revision-") as tmp:
        database = Path(tmp) / "bench.sqlite3"
        _prepare(database)
        checkout = Path(tmp) / "before"
        _git("worktree", "add", "--detach", str(checkout), before)
        try:
            for round_number in range(args.rounds):
                for label, tree in (("before", checkout), ("now", ROOT)):
                    print(f"round {round_number + 1}: {label}", file=sys.stderr)
                    for name, times in _time_tree(tree, database, args.runs).items():
                        samples[label].setdefault(name, []).extend(times)
        finally:
            _git("worktree", "remove", "--force", str(checkout))
    endpoints = {}
    for name in samples["now"]:
        now, then = _summary(samples["now"][name]), _summary(samples["before"][name])
        endpoints[name] = {
            "before": then,
            "now": now,
            "ratio": round(now["median_ms"] / then["median_ms"], 3),
        }
    results = {
        "command": ".venv/bin/python bench/versus_revision.py",
        "machine": machine_info(),
        "before": before,
        "rounds": args.rounds,
        "runs_per_round": args.runs,
        "endpoints": endpoints,
    }
    write_results(Path(args.output), results, render)


if __name__ == "__main__":
    main()
