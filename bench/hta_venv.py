"""Virtualenvs of their own for the tools a benchmark compares with (not project dependencies):
Holistic Trace Analysis for trace_vs_hta.py, the sizing peers for accuracy.py. Each is created
once, from pinned versions, with a CPU-only torch checked before anything is installed."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from machine import ROOT

HTA_REQUIREMENTS = ["torch==2.13.0", "holistictraceanalysis==0.5.0", "pandas<3"]
INSTALL_TIMEOUT_S = 1200


@dataclass(frozen=True)
class PipStep:
    """One `pip install`: its requirements, extra pip flags and environment variables."""

    requirements: list[str]
    flags: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)


def _pip(command: list[str], log_path: Path, env: dict[str, str] | None = None) -> None:
    """Run pip with its output in log_path (it warns about every local index it skips)."""
    with open(log_path, "w") as log:
        completed = subprocess.run(
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            timeout=INSTALL_TIMEOUT_S,
            env={**os.environ, **(env or {})},
        )
    if completed.returncode != 0:
        tail = log_path.read_text(errors="replace")[-3000:]
        raise SystemExit(f"pip failed ({completed.returncode}):\n{tail}")


def hta_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def ensure_venv(venv: Path, what: str, steps: list[PipStep], check_imports: str) -> dict:
    """Create `venv` when `python -c check_imports` fails there: the first step's dry run must
    plan a CPU-only torch==2.13.0 and no CUDA package, or nothing is installed."""
    python = hta_python(venv)
    check = [str(python), "-c", check_imports]
    if python.exists() and subprocess.run(check, capture_output=True, timeout=300).returncode == 0:
        return {"created": False, "venv": str(venv.relative_to(ROOT))}
    started = time.monotonic()
    print(f"Creating {venv} for {what} (one time; torch is large, this takes a few minutes)")
    base_python = shutil.which("python3") or sys.executable
    subprocess.run([base_python, "-m", "venv", str(venv)], check=True, timeout=300)
    pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check"]
    with tempfile.TemporaryDirectory(prefix="venv-pip-") as tmp:
        report_path, log_path = Path(tmp) / "report.json", Path(tmp) / "pip.log"
        first = steps[0]
        _pip([*pip, "--dry-run", "--report", str(report_path), *first.requirements], log_path)
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
        for step in steps:
            _pip([*pip, *step.flags, *step.requirements], log_path, step.env)
    subprocess.run(check, check=True, timeout=300)
    return {
        "created": True,
        "venv": str(venv.relative_to(ROOT)),
        "install_s": round(time.monotonic() - started, 1),
        "torch": torch_version,
        "packages_installed": len(planned),
    }


def ensure_hta_venv(venv: Path) -> dict:
    """Create the HTA virtualenv when it is missing; refuse a CUDA build of torch."""
    return ensure_venv(
        venv, "HTA", [PipStep(HTA_REQUIREMENTS)], "import hta.trace_analysis, torch, pandas"
    )
