"""Holistic Trace Analysis in a virtualenv of its own (it is not a project dependency)."""

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import ROOT

HTA_REQUIREMENTS = ["torch==2.13.0", "holistictraceanalysis==0.5.0", "pandas<3"]
INSTALL_TIMEOUT_S = 1200


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
