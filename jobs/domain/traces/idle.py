"""Why the GPU sat idle: Holistic Trace Analysis's idle time breakdown, on a rank's GPU work.

HTA (facebookresearch/HolisticTraceAnalysis, `BreakdownAnalysis._analyze_idle_time_for_stream`,
documented as "Idle Time Breakdown") looks at each gap between consecutive kernels, together
with the CPU-side runtime call that launched the kernel after the gap (joined on correlation id):

- host wait: the launch started after the previous kernel ended, so the GPU ran dry because the
  CPU had not enqueued the next kernel yet (data loading, Python overhead, a sync);
- kernel wait: otherwise, when the gap is shorter than `consecutive_kernel_delay`: the short
  overhead of starting back-to-back kernels that were already queued;
- other: everything else, e.g. a kernel queued in time but waiting on a CUDA event from another
  stream, or a kernel whose launch the trace does not hold.

HTA 0.5.0 compares gaps with consecutive_kernel_delay=30 in its data frames' unit, microseconds
(its docstring says nanoseconds; later releases moved the frames to ns), so KERNEL_WAIT_US = 30.

One deliberate difference: HTA splits each CUDA stream's gaps on its own, and gaps of parallel
streams overlap, so its per-stream sums exceed the time the GPU was actually idle. Here the same
rule runs on the device's merged timeline (every kernel, copy and sync, as the temporal
breakdown merges them): each idle gap is classified by the event that ends it (the earliest
launched, when several start together). The three parts then add up exactly to the temporal
breakdown's idle time, so "80 % of the idle time is host wait" reads against the same idle share.
"""

import math
from typing import Any

from jobs.domain.traces.work import GpuWork

KERNEL_WAIT_US = 30.0


def idle_breakdown(work: GpuWork) -> dict[str, Any]:
    """The RankSummary idle-cause fields; None each when the format records no launches."""
    if work.launch_us is None or not len(work):
        return {"idle_host_wait_us": None, "idle_kernel_wait_us": None, "idle_other_us": None}
    events = sorted(
        zip(work.start_us, work.end_us, work.launch_us, strict=True),
        key=lambda event: (event[0], math.inf if math.isnan(event[2]) else event[2]),
    )
    host_us = kernel_us = other_us = 0.0
    latest_end_us = events[0][1]
    for start_us, end_us, launch_us in events[1:]:
        gap_us = start_us - latest_end_us
        if gap_us > 0:
            # NaN compares false: a kernel whose launch is missing is never host wait.
            if launch_us > latest_end_us:
                host_us += gap_us
            elif gap_us < KERNEL_WAIT_US:
                kernel_us += gap_us
            else:
                other_us += gap_us
        if end_us > latest_end_us:
            latest_end_us = end_us
    return {
        "idle_host_wait_us": host_us,
        "idle_kernel_wait_us": kernel_us,
        "idle_other_us": other_us,
    }
