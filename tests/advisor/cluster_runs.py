"""The cluster set (tests/fixtures/calibration/cluster_runs.json) read through the sizing engine.

Each row is a published multi-node training run: tokens/s/GPU at a stated GPU count, or the
GPU-hours of stated tokens. `ours(row)` sizes the row's input as `recommend` sizes a candidate
(its layout from `rank_candidates` for the row's GPU and count), then times it across nodes
over the network the source states (`network`; null where it states none: then as the engine
times a candidate with no instance, its collectives across nodes not sized), and returns our
low / expected / high in the row's unit. tests/advisor/test_cluster_runs.py and
bench/cluster_accuracy.py both read the rows through here; held-out rows (no constant was
fitted on them) are reported apart from the in-sample ones.
"""

import json
import statistics
from dataclasses import dataclass
from pathlib import Path

from advisor.domain.devices import NODE_FABRIC_GPUS
from advisor.domain.ranges import Range
from advisor.domain.sizing.architecture import architecture_from_params
from advisor.domain.sizing.bundled_models import bundled_models
from advisor.domain.sizing.precision import Dtype
from advisor.domain.sizing.recommend import rank_candidates
from advisor.domain.sizing.rental import MAX_CLUSTER_GPUS, Rental
from advisor.domain.sizing.speed import training_time
from advisor.domain.sizing.speed.cluster import Cluster
from advisor.domain.sizing.workload import Task, Workload
from catalog.domain.networks import InstanceNetwork
from tests.advisor.devices import GPUS

CLUSTER_RUNS_PATH = (
    Path(__file__).resolve().parents[1] / "fixtures" / "calibration" / "cluster_runs.json"
)
HELD_OUT, IN_SAMPLE = "held_out", "in_sample"
# Summary buckets beside those two: held-out rows the engine does not model, and every held-out
# row together.
NOT_MODELLED, ALL_HELD_OUT = "held_out_not_modelled", "held_out_all"
_ARCHITECTURE_KEYS = ("num_layers", "hidden_size", "num_kv_heads")
_LAYOUT_KEYS = {"model", "params", "gpu", "gpu_count", "network", *_ARCHITECTURE_KEYS}


def cluster_rows() -> list[dict]:
    return json.loads(CLUSTER_RUNS_PATH.read_text())["rows"]


def cluster_excluded() -> list[dict]:
    return json.loads(CLUSTER_RUNS_PATH.read_text())["excluded"]


def sample_of(row: dict) -> str:
    return IN_SAMPLE if row.get("sample") == "in" else HELD_OUT


def workload_for(row: dict) -> Workload:
    """The row's input as a Workload, allowed the row's GPU count."""
    given = row["input"]
    if "model" in given:
        architecture = bundled_models()[given["model"]].architecture()
    else:
        shape = {key: given[key] for key in _ARCHITECTURE_KEYS if key in given}
        architecture = architecture_from_params(given["params"], **shape)
    fields = {key: value for key, value in given.items() if key not in _LAYOUT_KEYS}
    fields |= {"task": Task(fields["task"]), "weight_dtype": Dtype(fields["weight_dtype"])}
    workload = Workload(
        architecture=architecture, rental=Rental(max_gpus=MAX_CLUSTER_GPUS), **fields
    )
    workload.validate()
    return workload


def _cluster(row: dict) -> Cluster | None:
    network = row["input"].get("network")
    if network is None:
        return None
    stated = InstanceNetwork(network["fabric"], network["network_gbps"], network["source"])
    return Cluster(NODE_FABRIC_GPUS, stated)


def ours(row: dict) -> Range:
    """Our low / expected / high for the row's figure, in its unit."""
    workload = workload_for(row)
    count = row["input"]["gpu_count"]
    device = GPUS[row["input"]["gpu"]]
    (candidate,) = rank_candidates(workload, [device], {}, counts=(count,))
    hours = training_time(workload, device, candidate.parallelism, _cluster(row)).hours
    quantity = row["published"]["quantity"]
    if quantity == "gpu_hours":
        return hours.scaled(count)
    if quantity == "training_tokens_per_s_per_gpu":
        return hours.inverted(workload.tokens_to_train / (3600 * count))
    raise ValueError(f"{row['id']}: unknown quantity {quantity}")


@dataclass(frozen=True)
class Judged:
    row: dict
    ours: Range

    @property
    def published(self) -> float:
        return self.row["published"]["value"]

    @property
    def error_pct(self) -> float:
        """Our expected value against the published figure, signed."""
        return (self.ours.expected / self.published - 1) * 100

    @property
    def inside(self) -> bool:
        half = self.row["published"].get("resolution", 0) / 2
        return self.ours.low <= self.published + half and self.published - half <= self.ours.high


def judged_rows() -> list[Judged]:
    return [Judged(row, ours(row)) for row in cluster_rows()]


def figures(items: list[Judged]) -> dict:
    """Rows, median |error| %, and the share inside our range."""
    return {
        "rows": len(items),
        "median_abs_error_pct": (
            round(statistics.median(abs(item.error_pct) for item in items), 1) if items else None
        ),
        "inside_share": (
            round(sum(item.inside for item in items) / len(items), 3) if items else None
        ),
    }


def modelled(row: dict) -> bool:
    """Whether the engine models the row's published configuration; a row that says
    `not_modelled` (expert parallelism, a pipeline over a large global batch: read from the
    row's published layout) is reported, not held to the band."""
    return "not_modelled" not in row


def summary(judged: list[Judged]) -> dict[str, dict]:
    """Held out (the rows the engine models), held out but not modelled, and in sample."""
    held_out = [item for item in judged if sample_of(item.row) == HELD_OUT]
    return {
        HELD_OUT: figures([item for item in held_out if modelled(item.row)]),
        NOT_MODELLED: figures([item for item in held_out if not modelled(item.row)]),
        ALL_HELD_OUT: figures(held_out),
        IN_SAMPLE: figures([item for item in judged if sample_of(item.row) == IN_SAMPLE]),
    }
