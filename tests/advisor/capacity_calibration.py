"""The capacity planner's latencies against published serving benchmarks
(tests/fixtures/capacity/published_latency.json): ours against theirs, held out apart.

Each row is one measured configuration at one request rate. `compare(row)` sizes the row's
input the way `plan_capacity` sizes a candidate (the engine's step times for that model, GPU,
tensor parallel and precision, the candidate's KV pool and prefill budget), spreads the rate
evenly over the row's replicas and asks the queueing model for each published percentile at
the expected step times: a p50 is compared with our p50, a p99 with our p99
(`ReplicaQueue.quantile_at`), never our p95 with their p99. A row with an input its source
does not state (null) is recorded and not compared; `not_compared` says which and why.

What the model answers for: time to first token and inter-token latency at a percentile, and
the mean inter-token latency. End-to-end percentiles only where every request has the same
lengths (the model takes lengths as fixed; a dataset's spread of answer lengths is most of its
end-to-end spread). Per-request time per output token (MLPerf's TPOT, vLLM's TPOT) is a mean
over one request's gaps, whose spread across requests the model does not give: reported in the
"not modelled" table without an error.

`tests/advisor/test_capacity_published.py` and `bench/capacity_accuracy.py` read rows through
here.
"""

import json
import re
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from advisor.domain.planning.capacity import Load, planning_workload, replica_traffic
from advisor.domain.planning.queueing import ReplicaQueue
from advisor.domain.planning.timing import ReplicaTimes
from advisor.domain.sizing.recommend import rank_candidates
from tests.advisor.calibration import (
    HELD_OUT,
    IN_SAMPLE,
    calibration_rows,
    fitted_constants,
    workload_for,
)
from tests.advisor.devices import GPUS

PUBLISHED_LATENCY_PATH = (
    Path(__file__).resolve().parents[1] / "fixtures" / "capacity" / "published_latency.json"
)
# The inputs a row needs before it can be run through the planner.
REQUIRED_INPUTS = (
    "model",
    "gpu",
    "gpu_count",
    "tensor_parallel",
    "replicas",
    "requests_per_second",
    "prompt_tokens_mean",
    "output_tokens_mean",
    "weight_dtype",
    "kv_dtype",
    "engine",
)
# Engines as the sizing engine names its stacks.
STACKS = {"vLLM": "vllm", "TensorRT-LLM": "tensorrt_llm", "SGLang": "sglang"}
_KEY = re.compile(r"^(?P<metric>ttft|itl|tpot|e2e)_(?P<stat>mean|p\d+(?:\.\d+)?)_ms$")


@dataclass(frozen=True)
class Figure:
    """One published latency beside ours (None: not modelled, or not computed)."""

    row_id: str
    key: str  # as the row spells it: ttft_p99_ms
    theirs_ms: float
    ours_ms: float | None

    @property
    def metric(self) -> str:
        return _KEY.match(self.key)["metric"]

    @property
    def error_pct(self) -> float | None:
        if self.ours_ms is None:
            return None
        return 100 * (self.ours_ms - self.theirs_ms) / self.theirs_ms


def latency_rows(path: Path = PUBLISHED_LATENCY_PATH) -> list[dict]:
    return json.loads(path.read_text())["rows"]


def fitted_sources() -> set[str]:
    """The row ids and the source URLs some calibrated constant was fitted on (a calibration
    row's URL counts for every row read from the same page)."""
    fitted_on = {row_id for fit in fitted_constants().values() for row_id in fit.fitted_on}
    urls = {row["source"]["url"] for row in calibration_rows() if row["id"] in fitted_on}
    return fitted_on | urls


def sample_of(row: dict) -> str:
    """HELD_OUT unless the row is marked in sample, or a calibrated constant was fitted on it or
    on its source."""
    fitted = row.get("sample") == "in" or {row["id"], row["url"]} & fitted_sources()
    return IN_SAMPLE if fitted else HELD_OUT


def missing_inputs(row: dict) -> tuple[str, ...]:
    """The inputs the planner needs that the row's source does not state."""
    return tuple(name for name in REQUIRED_INPUTS if row["input"].get(name) is None)


def latency_keys(row: dict) -> list[str]:
    """The row's published latencies (the measured keys that name a latency statistic)."""
    return [key for key in row["measured"] if _KEY.match(key)]


def is_modelled(row: dict, key: str) -> bool:
    """Whether the queueing model gives this statistic for this row (see the module's doc)."""
    match = _KEY.match(key)
    metric, stat = match["metric"], match["stat"]
    if metric == "tpot":
        return False
    if metric == "e2e":
        return stat != "mean" and row["input"].get("lengths") == "fixed"
    return metric == "itl" or stat != "mean"


def quantile_of(key: str) -> float | None:
    """0.99 for ttft_p99_ms; None for a mean."""
    stat = _KEY.match(key)["stat"]
    return None if stat == "mean" else float(stat[1:]) / 100


def _queue(row: dict) -> ReplicaQueue:
    given = row["input"]
    prompt, output = round(given["prompt_tokens_mean"]), round(given["output_tokens_mean"])
    workload, _ = workload_for(
        {
            "input": {
                "model": given["model"],
                "task": "inference",
                "weight_dtype": given["weight_dtype"],
                "kv_dtype": given["kv_dtype"],
                "stack_name": STACKS[given["engine"]],
                "context_tokens": prompt + output,
                "output_tokens": output,
                "batch_size": 1,
            }
        }
    )
    per_replica = given["requests_per_second"] / given["replicas"]
    workload = planning_workload(workload, Load(per_replica, prompt, output))
    (candidate,) = rank_candidates(
        workload, [GPUS[given["gpu"]]], {}, counts=(given["tensor_parallel"],)
    )
    if not candidate.fits:
        raise ValueError(f"{row['id']}: does not fit ({candidate.reason})")
    times = ReplicaTimes(workload, candidate.device, candidate.parallelism)
    return ReplicaQueue(times.at("expected"), replica_traffic(workload, candidate))


def compare(row: dict) -> list[Figure]:
    """Every published latency of a complete row beside ours at the expected step times; ours
    None where not modelled or past the model's bound (the queue's `limit` says why)."""
    queue = _queue(row)
    rate = row["input"]["requests_per_second"] / row["input"]["replicas"]
    figures = []
    for key in latency_keys(row):
        ours = None
        if is_modelled(row, key):
            quantile = quantile_of(key)
            if quantile is None:  # a mean: only the inter-token one is modelled
                latency = queue.at(rate)
                ours = None if latency is None else latency.itl_mean_s * 1e3
            else:
                at = queue.quantile_at(rate, quantile)
                ours = None if at is None else getattr(at, f"{_KEY.match(key)['metric']}_s") * 1e3
        figures.append(Figure(row["id"], key, row["measured"][key], ours))
    return figures


def saturation_share(row: dict) -> float:
    """The row's rate per replica over the rate at which our replica's prompt queue grows
    without end: how near saturation the model puts the row."""
    rate = row["input"]["requests_per_second"] / row["input"]["replicas"]
    return rate / _queue(row).saturation_rate()


def medians_by_metric(figures: Iterable[Figure]) -> dict[str, dict]:
    """Median |error| per statistic family (ttft, itl, e2e) and over all, of figures with an
    error."""
    by_metric: dict[str, list[float]] = {}
    for figure in figures:
        if figure.error_pct is not None:
            by_metric.setdefault(figure.metric, []).append(abs(figure.error_pct))
            by_metric.setdefault("all", []).append(abs(figure.error_pct))
    return {
        metric: {
            "median_abs_error_pct": round(statistics.median(errors), 1),
            "figures": len(errors),
        }
        for metric, errors in sorted(by_metric.items())
    }
