"""The outside-world figures the sizing engine is checked against (tests/fixtures)."""

import json
from pathlib import Path

REFERENCE = json.loads(
    (Path(__file__).resolve().parents[1] / "fixtures" / "sizing_reference.json").read_text()
)
