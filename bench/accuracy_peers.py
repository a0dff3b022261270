"""The peer tools for bench/accuracy.py: their virtualenv and one run over the calibration rows.

`.venv-peers/` (gitignored) holds llm-analysis, accelerate with transformers, and DeepSpeed,
pinned below, with a CPU-only torch. llm-analysis 0.2.2 declares huggingface-hub<0.15, which
transformers 5 cannot import with, so it is installed without its dependencies (it needs
`fire`, pinned here, and reads configs we hand it, never the Hub). DeepSpeed's setup imports
torch, so it is built against the torch already installed (no build isolation, no CUDA ops).
"""

import json
import subprocess
from dataclasses import asdict

from hta_venv import PipStep, ensure_venv, hta_python
from machine import ROOT

PEERS_VENV = ROOT / ".venv-peers"
PEER_DRIVER = ROOT / "bench" / "accuracy_peer_driver.py"
PEER_STEPS = [
    PipStep(["torch==2.13.0", "accelerate==1.15.0", "transformers==5.24.0", "fire==0.5.0"]),
    PipStep(["deepspeed==0.19.8"], ["--no-build-isolation"], {"DS_BUILD_OPS": "0"}),
    PipStep(["llm-analysis==0.2.2"], ["--no-deps"]),
]
PEER_IMPORTS = "import llm_analysis.analysis, accelerate, transformers, deepspeed"
PEER_TIMEOUT_S = 900


def ensure_peers_venv() -> dict:
    return ensure_venv(PEERS_VENV, "the sizing peers", PEER_STEPS, PEER_IMPORTS)


def peer_tasks(rows: list[dict]) -> list[dict]:
    """What the driver needs per row, from the project's own data: the bundled config (None
    for a bare parameter count), the parameter counts and the GPU's catalogue figures."""
    from advisor.domain.sizing.bundled_models import bundled_models
    from tests.advisor.calibration import workload_for
    from tests.advisor.devices import GPUS

    tasks = []
    for row in rows:
        given = row["input"]
        architecture = workload_for(row)[0].architecture
        device = asdict(GPUS[given["gpu"]])
        tasks.append(
            {
                "id": row["id"],
                "quantity": row["published"]["quantity"],
                "input": given,
                "config": bundled_models()[given["model"]].config if "model" in given else None,
                "params_total": architecture.params_total,
                "largest_layer_params": architecture.largest_layer_params,
                "device": device,
            }
        )
    return tasks


def run_peers(rows: list[dict]) -> dict:
    """The driver's answer ({"versions", "answers"}) for the rows that ask for a figure."""
    tasks = [task for task in peer_tasks(rows) if task["quantity"] != "fits"]
    completed = subprocess.run(
        [str(hta_python(PEERS_VENV)), str(PEER_DRIVER)],
        input=json.dumps(tasks),
        capture_output=True,
        text=True,
        timeout=PEER_TIMEOUT_S,
        cwd=ROOT,
    )
    if completed.returncode != 0:
        raise SystemExit(
            f"peer driver failed ({completed.returncode}):\n{completed.stderr[-3000:]}"
        )
    return json.loads(completed.stdout)
