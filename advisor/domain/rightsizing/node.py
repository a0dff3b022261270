"""The machine a job ran on: every GPU the upload says it had, which of them ran the job's work,
and the finding when some sat idle.

Each rank lists the GPUs its file names (`MeasuredRank.gpus_present`: Kineto's
deviceProperties, nsys's TARGET_INFO_GPU, nvidia-smi's indices) with its own kernel count on
each; the lists are merged by GPU index, kernel counts added. Kernel-level files (Kineto, nsys)
decide when there are any, nvidia-smi logs otherwise. A GPU was used when kernels ran on it
(for nvidia-smi: when its utilisation was ever above zero; unknown when never reported).

The GPUs a job needs are the ones it used, or its world size when the ranks that were not
uploaded may have run on the others. When the world size is larger than one machine's GPUs the
ranks span machines, the indices repeat across them, and no finding is made. Otherwise every
GPU beyond what the job needs was idle for the whole window: a team renting that machine pays
for GPUs it does not use, and right-sizing prices an instance of the size the job needs.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from advisor.domain.rightsizing.measured import MeasuredRank
from advisor.domain.rightsizing.observed import KERNEL_SOURCES


@dataclass(frozen=True)
class NodeGpu:
    index: int
    source: str  # kineto | nsys | nvidia-smi
    name: str | None
    total_memory_bytes: int | None
    kernel_count: int | None  # None: nvidia-smi sees no kernels
    used: bool | None  # None: nvidia-smi never reported its utilisation
    rank: int | None  # the rank that ran on it (nsys and nvidia-smi number ranks by GPU)
    peak_memory_used_bytes: int | None


@dataclass(frozen=True)
class Node:
    gpus: list[NodeGpu] = field(default_factory=list)
    needed_gpus: int = 0  # what the job needs: the GPUs it used, or its world size
    idle_gpus: int = 0  # GPUs present beyond what it needs; 0 when ranks span machines
    finding: str = ""  # the sentence that says so; empty when every GPU was used

    @property
    def present_gpus(self) -> int:
        return len(self.gpus)


def node_of(ranks: Sequence[MeasuredRank]) -> Node:
    """The GPUs present, merged over the ranks of the most detailed source, and the finding."""
    gpu_ranks = [rank for rank in ranks if not rank.cpu_only]
    detailed = [rank for rank in gpu_ranks if rank.source in KERNEL_SOURCES]
    listing = detailed or gpu_ranks
    merged: dict[int, dict[str, Any]] = {}
    for rank in listing:
        for listed in rank.gpus_present or [_own_gpu(rank)]:
            _merge(merged, rank, listed)
    gpus = [NodeGpu(**merged[index]) for index in sorted(merged)]
    used = sum(1 for gpu in gpus if gpu.used)
    world_size = max((rank.world_size or 0 for rank in listing), default=0)
    needed = max(used, world_size)
    if not gpus or world_size > len(gpus):
        return Node(gpus, needed, 0, "")
    # A GPU whose use is unknown is never called idle.
    unknown = sum(1 for gpu in gpus if gpu.used is None)
    idle = max(len(gpus) - max(used + unknown, world_size), 0)
    return Node(gpus, needed, idle, _finding(gpus, idle, used, world_size))


def _own_gpu(rank: MeasuredRank) -> dict[str, Any]:
    """The GPU a rank ran on, for summaries that list none (written before they listed them)."""
    properties = rank.device_properties or {}
    index = properties.get("id", rank.rank)
    return {
        "id": index if type(index) is int else 0,
        "name": rank.gpu_name,
        "total_memory_bytes": properties.get("totalGlobalMem"),
        "kernel_count": None if rank.source == "nvidia-smi" else rank.kernel_count,
    }


def _merge(merged: dict[int, dict[str, Any]], rank: MeasuredRank, listed: Mapping) -> None:
    index = listed.get("id")
    if type(index) is not int:
        return
    entry = merged.setdefault(
        index,
        {
            "index": index,
            "source": rank.source,
            "name": None,
            "total_memory_bytes": None,
            "kernel_count": None,
            "used": None,
            "rank": None,
            "peak_memory_used_bytes": None,
        },
    )
    entry["name"] = entry["name"] or listed.get("name")
    entry["total_memory_bytes"] = entry["total_memory_bytes"] or listed.get("total_memory_bytes")
    kernels = listed.get("kernel_count")
    if rank.source == "nvidia-smi":
        ran = None if rank.utilization_mean_pct is None else rank.utilization_mean_pct > 0
    else:
        entry["kernel_count"] = (entry["kernel_count"] or 0) + (kernels or 0)
        ran = bool(kernels)
    if ran is not None:
        entry["used"] = bool(entry["used"]) or ran
    if ran and entry["rank"] is None:
        entry["rank"] = rank.rank
        entry["peak_memory_used_bytes"] = (
            rank.peak_reserved_bytes or rank.peak_allocated_bytes or rank.peak_memory_used_bytes
        )


def _finding(gpus: list[NodeGpu], idle: int, used: int, world_size: int) -> str:
    if idle <= 0:
        return ""
    unused = [gpu.index for gpu in gpus if gpu.used is False]
    which = _indices(unused)
    present = len(gpus)
    if world_size > used:
        return (
            f"at least {idle} of {present} GPUs were idle: the job has {world_size} ranks, "
            f"and {which} ran none of the uploaded ranks' kernels"
        )
    how = "showed no utilisation" if gpus[0].source == "nvidia-smi" else "ran no kernels"
    return (
        f"{idle} of {present} GPUs were idle for the whole window ({which} {how}): "
        f"the job used {used}"
    )


def _indices(indices: list[int]) -> str:
    if len(indices) == 1:
        return f"GPU {indices[0]}"
    return "GPUs " + ", ".join(str(index) for index in indices[:-1]) + f" and {indices[-1]}"
