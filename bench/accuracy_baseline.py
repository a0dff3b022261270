"""The calibration rows through the engine of an older commit (the BEFORE of bench/accuracy.py).

The commit is checked out with `git worktree add --detach` into a temporary directory; a child
process of the project's Python, with that checkout first on `sys.path`, loads today's reader
(tests/advisor/calibration.py, by its path) and today's rows, and prints one record per row.
The reader builds each workload only from the fields that engine has, so an input it lacks
(a stack, a memory budget) runs with that engine's defaults, and says so in `ignored_inputs`.
"""

import json
import subprocess
import tempfile
from pathlib import Path

from machine import PYTHON, ROOT

READER = ROOT / "tests" / "advisor" / "calibration.py"
CHILD = """
import importlib.util, json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
spec = importlib.util.spec_from_file_location("calibration_reader", sys.argv[2])
reader = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reader)
rows = reader.calibration_rows(Path(sys.argv[3]))
print(json.dumps([reader.record(row) for row in rows]))
"""
BASELINE_TIMEOUT_S = 600


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True
    ).stdout.strip()


def records_at_commit(commit: str, rows_path: Path) -> dict:
    """{"commit": full hash, "records": [...]} for every row of rows_path at `commit`."""
    full = _git("rev-parse", commit)
    with tempfile.TemporaryDirectory(prefix="accuracy-baseline-") as tmp:
        checkout = Path(tmp) / "checkout"
        _git("worktree", "add", "--detach", str(checkout), full)
        try:
            completed = subprocess.run(
                [str(PYTHON), "-c", CHILD, str(checkout), str(READER), str(rows_path)],
                cwd=checkout,
                capture_output=True,
                text=True,
                timeout=BASELINE_TIMEOUT_S,
            )
        finally:
            _git("worktree", "remove", "--force", str(checkout))
    if completed.returncode != 0:
        raise SystemExit(f"baseline run at {commit} failed:\n{completed.stderr[-3000:]}")
    return {"commit": full, "records": json.loads(completed.stdout)}
