"""Per-step wall time from the profiler's `ProfilerStep#N` annotations.

torch.profiler wraps each training step, from one `prof.step()` to the next, in a CPU-side
record_function named ProfilerStep#N; its duration is the step's wall time as the training loop
saw it. Steps are the spans of distinct names, in start order. When the GPU metrics dropped the
last step (HTA's convention: the profiler usually stops inside it), it is left out here too, so
the step times cover the same steps as the rest of the report.
"""

import re
import statistics
from collections.abc import Sequence
from typing import Any

# Step times kept for charts and comparison; the statistics use every step.
MAX_STEP_TIMES = 500
_STEP_NUMBER = re.compile(r"ProfilerStep#(\d+)$")


def step_stats(spans: Sequence[tuple[str, float, float]], *, drop_last: bool) -> dict[str, Any]:
    """The RankSummary step fields from (name, start_us, duration_us) spans."""
    longest: dict[str, tuple[float, float]] = {}
    for name, start_us, duration_us in spans:
        # A name seen twice (another thread's copy of the span) counts once, at its longest.
        if _STEP_NUMBER.search(name) and duration_us >= longest.get(name, (0.0, -1.0))[1]:
            longest[name] = (start_us, duration_us)
    steps = sorted(longest.items(), key=lambda item: item[1][0])
    if drop_last and len(steps) >= 2:
        steps = steps[:-1]
    if not steps:
        return {"step_count": 0}
    durations_us = [duration_us for _, (_, duration_us) in steps]
    slowest_name, (_, slowest_us) = max(steps, key=lambda item: item[1][1])
    return {
        "step_count": len(steps),
        "step_mean_us": statistics.fmean(durations_us),
        "step_stdev_us": statistics.stdev(durations_us) if len(durations_us) >= 2 else 0.0,
        "step_min_us": min(durations_us),
        "step_slowest_name": slowest_name,
        "step_slowest_us": slowest_us,
        "step_times_us": [(name, duration_us) for name, (_, duration_us) in steps][:MAX_STEP_TIMES],
    }
