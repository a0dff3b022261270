"""What machine a benchmark ran on, recorded with its results."""

import json
import os
import platform
import subprocess
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def git_revision() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("+uncommitted changes" if dirty else "")


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
