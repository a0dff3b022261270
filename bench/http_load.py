"""Client threads sending requests to one endpoint until a request cap or a deadline."""

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager

# One request: the status and the size of the answer's body.
Send = Callable[[], tuple[int, int]]


class Phase:
    """What one burst of requests to one endpoint measured."""

    def __init__(self, planned: int) -> None:
        self.latencies: list[float] = []
        self.statuses: dict[int, int] = {}
        self.errors: list[str] = []
        self.response_bytes = 0
        self.wall = 0.0
        self.planned = planned
        self.issued = 0


def drive(
    sender: Callable[[], AbstractContextManager[Send]],
    *,
    requests: int,
    concurrency: int,
    deadline: float,
    failures: tuple[type[Exception], ...],
) -> Phase:
    """`concurrency` threads, each with the `Send` its own `sender()` opens, send `requests`
    requests in all, and stop issuing them at `deadline` (time.monotonic). A request that
    raises one of `failures` is an error, not a latency."""
    lock = threading.Lock()
    phase = Phase(requests)

    def client_thread() -> None:
        with sender() as send:
            while True:
                with lock:
                    if phase.issued >= requests or time.monotonic() >= deadline:
                        return
                    phase.issued += 1
                started = time.perf_counter()
                try:
                    status, response_bytes = send()
                except failures as error:
                    with lock:
                        phase.errors.append(f"{type(error).__name__}: {error}")
                    continue
                elapsed = time.perf_counter() - started
                with lock:
                    phase.latencies.append(elapsed)
                    phase.statuses[status] = phase.statuses.get(status, 0) + 1
                    phase.response_bytes = response_bytes

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        # result() re-raises what a thread did not expect, so that it stops the benchmark.
        for future in [pool.submit(client_thread) for _ in range(concurrency)]:
            future.result()
    phase.wall = time.perf_counter() - started
    return phase
