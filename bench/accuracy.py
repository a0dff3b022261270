"""How accurate is the advisor: the calibration set against today's engine, the engine before
issue 15, and peer tools, on the same rows.

Run from the repository root:

    .venv/bin/python bench/accuracy.py

One run does, in order:

1. Reads the calibration rows (``tests/fixtures/calibration/published.json``: published
   measurements with their inputs and sources) and sizes each through today's engine with the
   reader the tests use (``tests/advisor/calibration.py``): our low / expected / high for the
   row's figure (or our fit verdict), the error of the expected value, and whether the
   published figure is inside the range.
2. BEFORE: the same rows through the engine at ``--baseline-commit`` (37d8c02, before issue
   15), run in a ``git worktree`` of that commit (``bench/accuracy_baseline.py``); inputs that
   engine has no field for run with its defaults. Stored in
   ``bench/results/accuracy_baseline.json`` with the commit and reused while the row ids are
   the same (``--refresh-baseline`` recomputes it).
3. Peers, side by side, where they run offline: llm-analysis, accelerate's estimate-memory
   arithmetic on the model built from the local config, DeepSpeed's ZeRO-2/3 model-state
   estimators, in ``.venv-peers/`` (created once, pinned, CPU-only torch:
   ``bench/accuracy_peers.py``), run in a child process (``bench/accuracy_peer_driver.py``).
   A peer that cannot answer a row leaves the cell empty; the reasons are listed once.
4. Writes ``bench/results/accuracy.json`` and ``bench/results/accuracy.md`` (the tables it
   prints): median |error| of the expected value by category for ours now, before and each
   peer (before and each peer beside ours on the same rows), twice: over the rows no
   calibrated constant was fitted on (held out: accuracy) and over the rows one was (in
   sample: fit quality), duplicate and identity rows in neither; how many published figures
   fall inside our range; every row with its mark; and each constant with the rows it was
   fitted on (``advisor/domain/provenance.py``).

Nothing here opens a network connection, except pip creating ``.venv-peers`` the first time.
"""

import json
import sys
from collections import Counter
from pathlib import Path

from accuracy_baseline import records_at_commit
from accuracy_peers import ensure_peers_venv, run_peers
from accuracy_report import PEER_NAMES, markdown
from machine import RESULTS_DIR, ROOT, git_revision, machine_at_start, write_results
from options import Option, options_parser

sys.path.insert(0, str(ROOT))
# The reader lives with the tests; it needs the repository root on sys.path first.
from tests.advisor.calibration import (
    CALIBRATION_PATH,
    SAMPLES,
    calibration_rows,
    excluded_rows,
    fitted_constants,
    inputs_sha256,
    is_moe_row,
    median_abs_error_pct,
    medians_by_sample,
    record,
    sample_of,
)

BASELINE_COMMIT = "37d8c02"
BASELINE_PATH = RESULTS_DIR / "accuracy_baseline.json"
OPTIONS: list[Option] = [
    ("--output", str(RESULTS_DIR / "accuracy.json"), "JSON results (the .md goes beside it)"),
    ("--baseline-commit", BASELINE_COMMIT, "the engine to compare with (BEFORE)"),
    ("--refresh-baseline", False, "recompute the BEFORE records even if stored"),
    ("--skip-peers", False, "do not create or run .venv-peers"),
]


def baseline(rows: list[dict], commit: str, refresh: bool) -> dict:
    """The stored BEFORE records, or new ones when the rows, the reader or the commit changed."""
    ids = [row["id"] for row in rows]
    if BASELINE_PATH.exists() and not refresh:
        stored = json.loads(BASELINE_PATH.read_text())
        if stored["inputs_sha256"] == inputs_sha256() and stored["commit"].startswith(commit):
            return stored
    print(f"Computing the BEFORE records at {commit} in a git worktree")
    made = records_at_commit(commit, CALIBRATION_PATH)
    by_id = dict(zip(ids, made["records"], strict=True))
    stored = {
        "about": "The calibration rows through the engine at `commit` (bench/accuracy.py); "
        "medians over the held-out and the in-sample rows apart, duplicates in neither.",
        "commit": made["commit"],
        "inputs_sha256": inputs_sha256(),
        "row_ids": ids,
        "median_abs_error_pct": medians_by_sample(
            rows, lambda row: by_id[row["id"]].get("error_pct")
        ),
        "records": made["records"],
    }
    BASELINE_PATH.write_text(json.dumps(stored, indent=1) + "\n")
    return stored


def peers(rows: list[dict], skip: bool) -> dict:
    if skip:
        return {"skipped": True, "answers": {}}
    setup = ensure_peers_venv()
    answered = run_peers(rows)
    why: dict[str, Counter] = {name: Counter() for name in PEER_NAMES}
    for cells in answered["answers"].values():
        for name, cell in cells.items():
            if cell["value"] is None:
                why[name][cell["why"]] += 1
    return {
        "venv": setup,
        "versions": answered["versions"],
        "answers": answered["answers"],
        "why_empty": {
            name: dict(reasons.most_common()) for name, reasons in why.items() if reasons
        },
    }


def _error_pct(value: float | None, published: float) -> float | None:
    return None if value is None else 100 * (value - published) / published


def _medians(entries: list[dict], error_of) -> dict[str, dict]:
    return median_abs_error_pct((entry["category"], error_of(entry)) for entry in entries)


def _ours_error(entry: dict) -> float | None:
    return entry["ours"].get("error_pct")


def _beside_ours(entries: list[dict], error_of) -> tuple[dict, dict]:
    """Another engine's (or a peer's) medians and ours, both over the rows it and we answer."""
    both = [e for e in entries if None not in (error_of(e), _ours_error(e))]
    return _medians(both, error_of), _medians(both, _ours_error)


def _sample_medians(entries: list[dict], peer_names: list[str]) -> dict:
    """Ours, before and each peer over one sample's rows; before and each peer with ours on
    the same rows."""
    before, ours_on_before = _beside_ours(entries, lambda e: (e["before"] or {}).get("error_pct"))
    peers = {
        name: _beside_ours(entries, lambda e, n=name: (e["peers"].get(n) or {}).get("error_pct"))
        for name in peer_names
    }
    return {
        "ours": _medians(entries, _ours_error),
        "before": before,
        "ours_on_before_rows": ours_on_before,
        "peers": {name: medians for name, (medians, _) in peers.items()},
        "ours_on_peer_rows": {name: ours for name, (_, ours) in peers.items()},
    }


def _inside_counts(entries: list[dict], key: str) -> dict[str, str]:
    counts: dict[str, list[int]] = {}
    for entry in entries:
        stored = entry[key]
        for category in (entry["category"], "all"):
            tally = counts.setdefault(category, [0, 0])
            tally[0] += bool(stored.get("inside"))
            tally[1] += 1
    return {category: f"{inside}/{total}" for category, (inside, total) in counts.items()}


def main() -> None:
    args = options_parser(__doc__, OPTIONS).parse_args()
    rows = calibration_rows()
    before = baseline(rows, args.baseline_commit, args.refresh_baseline)
    before_by_id = dict(zip(before["row_ids"], before["records"], strict=True))
    peer_results = peers(rows, args.skip_peers)
    entries = []
    for row in rows:
        answers = peer_results["answers"].get(row["id"], {})
        entries.append(
            {
                "id": row["id"],
                "category": row["category"],
                "sample": sample_of(row),
                "moe": is_moe_row(row),
                **{key: row[key] for key in ("duplicate_of", "identity") if key in row},
                "input": row["input"],
                "published": row["published"],
                "source": row["source"],
                "ours": record(row),
                "before": before_by_id.get(row["id"]),
                "peers": {
                    name: {
                        "value": cell["value"],
                        "error_pct": _error_pct(cell["value"], row["published"]["value"]),
                    }
                    for name, cell in answers.items()
                },
            }
        )
    peer_names = [] if args.skip_peers else list(PEER_NAMES)
    by_sample = {sample: [e for e in entries if e["sample"] == sample] for sample in SAMPLES}
    results = {
        "command": ".venv/bin/python bench/accuracy.py",
        "machine": {**machine_at_start(), "git_revision": git_revision()},
        "baseline": {"commit": before["commit"], "path": str(BASELINE_PATH.relative_to(ROOT))},
        "peers": {key: value for key, value in peer_results.items() if key != "answers"},
        # Per sample (held_out, in_sample); duplicate and identity rows are in neither.
        "median_abs_error_pct": {
            sample: _sample_medians(sampled, peer_names) for sample, sampled in by_sample.items()
        },
        # The mixture-of-experts rows among the held out, apart: they are in the medians above.
        "moe_held_out": {
            "median_abs_error_pct": _medians(
                [e for e in by_sample["held_out"] if e["moe"]], _ours_error
            ),
            "inside": _inside_counts([e for e in by_sample["held_out"] if e["moe"]], "ours"),
        },
        "inside_by_category": {
            sample: {
                "ours": _inside_counts(sampled, "ours"),
                "before": _inside_counts([e for e in sampled if e["before"]], "before"),
            }
            for sample, sampled in by_sample.items()
        },
        "fitted": {
            name: {"fitted_on": list(fit.fitted_on), "source": fit.source}
            for name, fit in fitted_constants().items()
        },
        "rows": entries,
        "excluded": excluded_rows(),
    }
    write_results(Path(args.output), results, markdown)


if __name__ == "__main__":
    main()
