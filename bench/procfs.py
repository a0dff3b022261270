"""Processes seen through /proc: resident memory, children, and one child measured whole."""

import contextlib
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

from machine import ROOT

RSS_SAMPLE_INTERVAL_S = 0.02
MIB = 2**20


def rss_bytes(pid: int) -> int:
    """Resident memory of one process: the second field of /proc/<pid>/statm, in pages."""
    with open(f"/proc/{pid}/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def rss_mib(pid: int) -> float:
    return round(rss_bytes(pid) / MIB, 1)


def child_pids(pid: int) -> list[int]:
    """The processes that any thread of pid started and that still run."""
    pids = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as children:
            pids.extend(int(child) for child in children.read().split())
    return pids


class TreeRssSampler(threading.Thread):
    """Peak of the summed RSS of a process and its descendants, sampled from /proc."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak_bytes = 0
        self.processes_seen = {pid}
        self._stop_event = threading.Event()

    def stop(self) -> None:
        self._stop_event.set()
        self.join()

    def run(self) -> None:
        while not self._stop_event.is_set():
            total = 0
            pending = [self.pid]
            while pending:
                pid = pending.pop()
                try:
                    total += rss_bytes(pid)
                    children = child_pids(pid)
                except (OSError, ValueError, IndexError):
                    continue
                pending.extend(children)
                self.processes_seen.update(children)
            self.peak_bytes = max(self.peak_bytes, total)
            self._stop_event.wait(RSS_SAMPLE_INTERVAL_S)


def measure(
    command: list[str], *, env: dict[str, str], timeout: float, workdir: Path, cwd: Path = ROOT
) -> dict:
    """Run command as one child; its wall time, its own peak RSS (os.wait4) and outputs."""
    stdout_path, stderr_path = workdir / "child.stdout", workdir / "child.stderr"
    with open(stdout_path, "wb") as stdout, open(stderr_path, "wb") as stderr:
        started = time.perf_counter()
        process = subprocess.Popen(
            command, cwd=cwd, env=env, stdout=stdout, stderr=stderr, start_new_session=True
        )
        sampler = TreeRssSampler(process.pid)
        sampler.start()
        timed_out, reaped, lock = threading.Event(), threading.Event(), threading.Lock()

        def kill() -> None:
            with lock:  # never signal a process group id that may have been reused
                if reaped.is_set():
                    return
                timed_out.set()
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)

        timer = threading.Timer(max(timeout, 1.0), kill)
        timer.start()
        try:
            _, status, usage = os.wait4(process.pid, 0)
        finally:
            with lock:
                reaped.set()
            timer.cancel()
        wall_s = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        sampler.stop()
    return {
        "wall_s": wall_s,
        "peak_rss_mib": usage.ru_maxrss * 1024 / MIB,  # Linux: kilobytes
        "sampled_tree_peak_rss_mib": sampler.peak_bytes / MIB,
        "processes": len(sampler.processes_seen),
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "exit_code": process.returncode,
        "timed_out": timed_out.is_set(),
        "stdout": stdout_path.read_text(errors="replace"),
        "stderr_tail": stderr_path.read_text(errors="replace")[-2000:],
    }
