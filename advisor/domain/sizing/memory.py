"""Memory per GPU for a workload on a layout: a served model's lines (serving_memory.py) or a
training step's (training_memory.py)."""

from advisor.domain.sizing.layout import Parallelism
from advisor.domain.sizing.memory_breakdown import MemoryBreakdown
from advisor.domain.sizing.serving_memory import serving_memory
from advisor.domain.sizing.training_memory import training_memory
from advisor.domain.sizing.workload import Task, Workload


def memory_per_gpu(workload: Workload, parallelism: Parallelism) -> MemoryBreakdown:
    if workload.task is Task.INFERENCE:
        return serving_memory(workload, parallelism)
    return training_memory(workload, parallelism)
