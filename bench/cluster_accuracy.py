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

from tests.advisor.calibration import is_moe_row  # noqa: E402 (after the path is set)
from tests.advisor.cluster_runs import (  # noqa: E402 (after the path is set)
    ALL_HELD_OUT,
    HELD_OUT,
    IN_SAMPLE,
    NOT_MODELLED,
    Judged,
    cluster_excluded,
    figures,
    judged_rows,
    modelled,
    sample_of,
    summary,
)
from tests.advisor.test_cluster_runs import (  # noqa: E402
    MAX_MEDIAN_ABS_ERROR_PCT,
    MIN_INSIDE_SHARE,
)

RESULTS = ROOT / "bench" / "results"
LABELS = {
    HELD_OUT: "held out (accuracy), configurations the engine models",
    NOT_MODELLED: "held out, configurations the engine does not model (reported, not banded)",
    ALL_HELD_OUT: "held out, every row",
    IN_SAMPLE: "in sample (fit quality)",
}
# Held-out subsets shown apart (each counted in the held-out line too), once they have rows
# enough for a median to mean something: per source, and the mixture-of-experts rows.
MIN_SUBSET_ROWS = 3
NVIDIA_SOURCES = ("github.com/NVIDIA-NeMo/Megatron-Bridge/", "github.com/NVIDIA/NeMo/")


def _is_nvidia(item: Judged) -> bool:
    return any(source in item.row["source"]["url"] for source in NVIDIA_SOURCES)


SUBSETS = {
    "of which NeMo / Megatron-Bridge performance summaries": _is_nvidia,
    "of which the other sources (LLM Foundry, TinyLlama)": lambda item: not _is_nvidia(item),
    "of which mixture-of-experts models": lambda item: is_moe_row(item.row),
}


def subset_summaries(judged: list[Judged]) -> dict[str, dict]:
    """The held-out figures per subset with at least MIN_SUBSET_ROWS held-out rows."""
    held_out = [item for item in judged if sample_of(item.row) == HELD_OUT]
    result = {}
    for label, belongs in SUBSETS.items():
        mine = [item for item in held_out if belongs(item)]
        if len(mine) >= MIN_SUBSET_ROWS:
            result[label] = figures(mine)
    return result


def _network(row: dict) -> str:
    network = row["input"].get("network")
    if network is None:
        return "not stated (collectives not sized)"
    return f"{network['fabric']} {network['network_gbps']:,} Gbps"


def _row_line(item: Judged) -> str:
    row, ours = item.row, item.ours
    given = row["input"]
    return (
        f"| {row['id']} | {sample_of(row).replace('_', ' ')}"
        f"{'' if modelled(row) else ', not modelled'} | {given['gpu']} | "
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
    labelled = [(LABELS[name], result[name]) for name in (HELD_OUT, NOT_MODELLED, ALL_HELD_OUT)]
    subsets = subset_summaries(judged)
    labelled += [(f"held out (every row), {label}", shown) for label, shown in subsets.items()]
    labelled.append((LABELS[IN_SAMPLE], result[IN_SAMPLE]))
    for label, shown in labelled:
        median = shown["median_abs_error_pct"]
        inside = shown["inside_share"]
        lines.append(
            f"| {label} | {shown['rows']} | "
            f"{'—' if median is None else f'{median:.1f}%'} | "
            f"{'—' if inside is None else f'{inside:.0%}'} |"
        )
    held_out = result[HELD_OUT]
    within = (
        held_out["median_abs_error_pct"] <= MAX_MEDIAN_ABS_ERROR_PCT
        and held_out["inside_share"] >= MIN_INSIDE_SHARE
    )
    lines += [
        "",
        f"The band stated before the rows were read (tests/advisor/test_cluster_runs.py): held-out "
        f"median within {MAX_MEDIAN_ABS_ERROR_PCT:.0f}%, at least {MIN_INSIDE_SHARE:.0%} inside "
        f"our range, on the configurations the engine models. A row whose published layout "
        "pipelines 8 or more stages over a large global batch says so (`not_modelled`, read "
        "from the layout the source states) and is reported above, not held to the band: the "
        "engine takes no global batch yet. That scope was drawn after the NeMo rows were read, "
        "from the layouts they state, not from their errors (expert parallelism was in it too "
        "until the engine laid out a MoE's experts by expert parallelism; those rows moved into "
        "the band by the same rule); the every-row line is the blind figure. "
        f"Held out and modelled now: {held_out['median_abs_error_pct']:.1f}%, "
        f"{held_out['inside_share']:.0%} inside: "
        + (
            "within the band."
            if within
            else "OUTSIDE the band (test_held_out_cluster_runs_are_within_the_stated_band "
            "fails; no constant or band was changed to make rows fit)."
        ),
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
    document = {
        "summary": summary(judged),
        "held_out_subsets": subset_summaries(judged),
        "rows": records,
    }
    (RESULTS / "cluster_accuracy.json").write_text(json.dumps(document, indent=1) + "\n")
    text = markdown(judged)
    (RESULTS / "cluster_accuracy.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
