"""How close the capacity planner's latencies come to published serving benchmarks.

Run from the repository root:

    .venv/bin/python bench/capacity_accuracy.py

Reads the published rows (``tests/fixtures/capacity/published_latency.json``: serving
measurements with latency percentiles at a stated request rate, each with its source) through
the reader the tests use (``tests/advisor/capacity_calibration.py``): each complete row through
the queueing model at the engine's expected step times, every published percentile beside ours
at the same percentile, and the relative error. Writes ``bench/results/capacity_accuracy.json``
and ``bench/results/capacity_accuracy.md``: a table per source, the median |error| per
statistic over the held-out rows and the in-sample ones apart, the published statistics the
model does not give (per-request TPOT, end-to-end over a dataset's lengths) without an error,
and the rows recorded but not compared, each with why. Nothing here opens a network
connection.
"""

import statistics
import sys
from pathlib import Path

from machine import RESULTS_DIR, ROOT, git_revision, machine_at_start, write_results
from options import Option, options_parser

sys.path.insert(0, str(ROOT))
# The reader lives with the tests; it needs the repository root on sys.path first.
from tests.advisor.calibration import SAMPLES
from tests.advisor.capacity_calibration import (
    PUBLISHED_LATENCY_PATH,
    compare,
    is_modelled,
    latency_rows,
    medians_by_metric,
    missing_inputs,
    sample_of,
    saturation_share,
)

OPTIONS: list[Option] = [
    ("--output", str(RESULTS_DIR / "capacity_accuracy.json"), "JSON results (the .md beside it)"),
]
# A statistic family is called systematically off when every compared figure of it errs the
# same way and the median error is at least this large.
SYSTEMATIC_MEDIAN_PCT = 15.0


def _entry(row: dict) -> dict:
    entry = {
        "id": row["id"],
        "source": row["source"],
        "url": row["url"],
        "retrieved": row["retrieved"],
        "where": row["where"],
        "sample": sample_of(row),
        "input": row["input"],
    }
    missing = missing_inputs(row)
    if missing:
        return {**entry, "missing_inputs": list(missing), "not_compared": row["not_compared"]}
    figures = compare(row)
    return {
        **entry,
        "saturation_share": round(saturation_share(row), 3),
        "figures": [
            {
                "key": figure.key,
                "modelled": is_modelled(row, figure.key),
                "theirs_ms": figure.theirs_ms,
                "ours_ms": figure.ours_ms,
                "error_pct": figure.error_pct,
            }
            for figure in figures
        ],
    }


def _systematic(entries: list[dict]) -> list[str]:
    """Plain sentences for each statistic family whose held-out errors all share a sign."""
    errors: dict[str, list[float]] = {}
    for entry in entries:
        if entry["sample"] != "held_out":
            continue
        for figure in entry.get("figures", []):
            if figure["error_pct"] is not None:
                errors.setdefault(figure["key"].split("_")[0], []).append(figure["error_pct"])
    sentences = []
    for metric, values in sorted(errors.items()):
        median = statistics.median(values)
        same_sign = all(v < 0 for v in values) or all(v > 0 for v in values)
        if same_sign and abs(median) >= SYSTEMATIC_MEDIAN_PCT:
            direction = "low" if median < 0 else "high"
            sentences.append(
                f"Systematic: our {metric} is {direction} on every held-out figure "
                f"({len(values)} figures, median error {median:+.1f}%)."
            )
    return sentences


def _cell(value: float | None, digits: int = 1) -> str:
    return "" if value is None else f"{value:,.{digits}f}"


def markdown(results: dict) -> str:
    lines = [
        "# Capacity planner against published serving benchmarks",
        "",
        f"`{results['command']}` at `{results['machine']['git_revision']}`; rows from "
        f"`{results['rows_path']}`. Ours: the queueing model at the engine's expected step "
        "times, at the percentile the source reports (a p99 against our p99). Error: "
        "(ours - theirs) / theirs.",
        "",
        "## Median |error| per statistic",
        "",
    ]
    for sample in SAMPLES:
        medians = results["median_abs_error_pct"][sample]
        label = "Held out (accuracy)" if sample == "held_out" else "In sample (fit quality)"
        lines.append(
            f"**{label}**: "
            + (
                ", ".join(
                    f"{metric} {m['median_abs_error_pct']}% over {m['figures']}"
                    for metric, m in medians.items()
                )
                or "no compared figures."
            )
        )
        lines.append("")
    lines += results["systematic"] or ["No systematic error shows on the compared figures."]
    lines.append("")
    compared = [e for e in results["rows"] if "figures" in e]
    for sample in SAMPLES:
        for source in sorted({e["source"] for e in compared if e["sample"] == sample}):
            lines += [f"## {source} ({sample.replace('_', ' ')})", ""]
            lines += [
                "| row | statistic | ours (ms) | theirs (ms) | error |",
                "| --- | --- | ---: | ---: | ---: |",
            ]
            for entry in compared:
                if entry["source"] != source or entry["sample"] != sample:
                    continue
                for figure in entry["figures"]:
                    if figure["modelled"]:
                        lines.append(
                            f"| {entry['id']} | {figure['key']} | {_cell(figure['ours_ms'])} | "
                            f"{_cell(figure['theirs_ms'])} | {_cell(figure['error_pct'])}% |"
                        )
            lines.append("")
    lines += [
        "## Published, not modelled",
        "",
        "Per-request time per output token, and end-to-end over a dataset's spread of lengths: "
        "the model gives neither, so no error is computed.",
        "",
        "| row | statistic | theirs (ms) |",
        "| --- | --- | ---: |",
    ]
    for entry in results["rows"]:
        for figure in entry.get("figures", []):
            if not figure["modelled"]:
                lines.append(f"| {entry['id']} | {figure['key']} | {_cell(figure['theirs_ms'])} |")
    lines += [
        "",
        "## Recorded, not compared",
        "",
        "| row | source | missing inputs | why |",
        "| --- | --- | --- | --- |",
    ]
    for entry in results["rows"]:
        if "not_compared" in entry:
            lines.append(
                f"| [{entry['id']}]({entry['url']}) | {entry['source']} | "
                f"{', '.join(entry['missing_inputs'])} | {entry['not_compared']} |"
            )
    lines.append("")
    return "\n".join(lines)


def main() -> None:
    args = options_parser(__doc__, OPTIONS).parse_args()
    rows = latency_rows()
    entries = [_entry(row) for row in rows]
    by_id = {row["id"]: row for row in rows}
    results = {
        "command": ".venv/bin/python bench/capacity_accuracy.py",
        "machine": {**machine_at_start(), "git_revision": git_revision()},
        "rows_path": str(PUBLISHED_LATENCY_PATH.relative_to(ROOT)),
        "median_abs_error_pct": {
            sample: medians_by_metric(
                figure
                for entry in entries
                if entry["sample"] == sample and "figures" in entry
                for figure in compare(by_id[entry["id"]])
                if is_modelled(by_id[entry["id"]], figure.key)
            )
            for sample in SAMPLES
        },
        "systematic": [],
        "rows": entries,
    }
    results["systematic"] = _systematic(entries)
    write_results(Path(args.output), results, markdown)


if __name__ == "__main__":
    main()
