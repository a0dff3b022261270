"""The GPU events a rank's metrics cover, whichever format they were read from."""

from dataclasses import dataclass


@dataclass
class GpuWork:
    """The kept GPU events, parallel lists in trace order, times relative to time_base_us."""

    start_us: list[float]
    end_us: list[float]
    name_id: list[int]
    stream: list[int]
    device: list[int]
    nbytes: list[int]
    last_step_dropped: bool
    dropped_count: int
    rounded: bool
    time_base_us: float = 0.0
    # When each event's launching runtime call (cudaLaunchKernel...) started, same time base;
    # NaN where the trace holds no launch for it. None for formats that record no launches.
    launch_us: list[float] | None = None

    def __len__(self) -> int:
        return len(self.start_us)
