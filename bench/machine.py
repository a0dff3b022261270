"""Where the benchmarks live, what machine one ran on, and writing its results."""

import json
import os
import platform
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = ROOT / "bench" / "results"
PYTHON = ROOT / ".venv" / "bin" / "python"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10, check=True
    ).stdout.strip()


def git_revision() -> str:
    try:
        head = _git("rev-parse", "--short", "HEAD")
        dirty = _git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("+uncommitted changes" if dirty else "")


def machine_at_start() -> dict:
    """Date, load average and CPUs, the first keys of every benchmark's `machine` record."""
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
    }


def write_results(output: Path, results: dict, render: Callable[[dict], str]) -> None:
    """Stamp the load average at the end, then write the JSON and its Markdown table side by
    side (the README quotes the table)."""
    results["machine"]["load_average_at_end"] = [round(value, 2) for value in os.getloadavg()]
    table = render(results)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(results, indent=2) + "\n")
    output.with_suffix(".md").write_text(table)
    print(table)
    print(f"Results written to {output} and {output.with_suffix('.md')}")


def machine_info() -> dict:
    """The machine record of the HTTP benchmarks."""
    return {
        **machine_at_start(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "git_revision": git_revision(),
    }
