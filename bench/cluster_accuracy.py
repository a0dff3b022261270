"""How accurate the sizing engine's multi-node training is: the cluster set against today's
engine.

Run from the repository root:

    .venv/bin/python bench/cluster_accuracy.py

Reads the published cluster runs (``tests/fixtures/calibration/cluster_runs.json``: tokens/s/GPU
at a stated GPU count, or GPU-hours of stated tokens, with the inter-node fabric each source
states), sizes each through the engine with the reader the tests use
(``tests/advisor/cluster_runs.py``), and writes ``bench/results/cluster_accuracy.json`` and
``bench/results/cluster_accuracy.md``: the median |error| of our expected value and the share
of published figures inside our range, over the held-out rows (no constant was fitted on them)
and over the in-sample rows apart, then every row. Nothing here opens a network connection.
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.advisor.cluster_runs import (  # noqa: E402 (after the path is set)
    HELD_OUT,
    IN_SAMPLE,
    Judged,
    cluster_excluded,
    judged_rows,
    sample_of,
    summary,
)

RESULTS = ROOT / "bench" / "results"
LABELS = {HELD_OUT: "held out (accuracy)", IN_SAMPLE: "in sample (fit quality)"}


def _network(row: dict) -> str:
    network = row["input"].get("network")
    if network is None:
        return "not stated (collectives not sized)"
    return f"{network['fabric']} {network['network_gbps']:,} Gbps"


def _row_line(item: Judged) -> str:
    row, ours = item.row, item.ours
    given = row["input"]
    return (
        f"| {row['id']} | {sample_of(row).replace('_', ' ')} | {given['gpu']} | "
        f"{given['gpu_count']:,} | {_network(row)} | {item.published:,} "
        f"{row['published']['unit']} | {ours.low:,.0f} / {ours.expected:,.0f} / "
        f"{ours.high:,.0f} | {item.error_pct:+.1f}% | {'yes' if item.inside else 'no'} |"
    )


def markdown(judged: list[Judged]) -> str:
    result = summary(judged)
    lines = [
        "| rows | count | median abs error of our expected value | published inside our range |",
        "| --- | ---: | ---: | ---: |",
    ]
    for sample in (HELD_OUT, IN_SAMPLE):
        figures = result[sample]
        median = figures["median_abs_error_pct"]
        inside = figures["inside_share"]
        lines.append(
            f"| {LABELS[sample]} | {figures['rows']} | "
            f"{'—' if median is None else f'{median:.1f}%'} | "
            f"{'—' if inside is None else f'{inside:.0%}'} |"
        )
    lines += [
        "",
        "Every row (ours: low / expected / high, in the published unit):",
        "",
        "| row | sample | GPU | GPUs | network between nodes | published | ours | error | inside |",
        "| --- | --- | --- | ---: | --- | ---: | ---: | ---: | --- |",
        *(_row_line(item) for item in judged),
        "",
        "Read and left out:",
        "",
        *(f"- {item['what']} ({item['url']}): {item['why']}" for item in cluster_excluded()),
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    judged = judged_rows()
    RESULTS.mkdir(parents=True, exist_ok=True)
    records = [
        {
            "id": item.row["id"],
            "sample": sample_of(item.row),
            "published": item.published,
            "ours": item.ours.as_dict(2),
            "error_pct": round(item.error_pct, 2),
            "inside": item.inside,
        }
        for item in judged
    ]
    document = {"summary": summary(judged), "rows": records}
    (RESULTS / "cluster_accuracy.json").write_text(json.dumps(document, indent=1) + "\n")
    text = markdown(judged)
    (RESULTS / "cluster_accuracy.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
