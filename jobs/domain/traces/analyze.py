"""analyze_traces: uploaded files in, one HTA-style summary per rank (or GPU) out.

Files are told apart by content (`sniff`): Kineto JSON traces are parsed here and summarised per
rank; Nsight Systems SQLite exports (`nsys`) and nvidia-smi CSV logs (`nvidia_smi`) yield one
summary per GPU, in the same RankSummary shape, marked by `source`.
"""

from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import BinaryIO

from jobs.domain.traces.errors import TraceError
from jobs.domain.traces.kineto.parse import ParsedTrace, parse_trace
from jobs.domain.traces.kineto.rank import summarize_rank
from jobs.domain.traces.nsys.export import summarize_nsys
from jobs.domain.traces.nvidia_smi.log import summarize_nvidia_smi
from jobs.domain.traces.sniff import Kind
from jobs.domain.traces.sources import open_sources
from jobs.domain.traces.summary import RankSummary, TraceSummary

Progress = Callable[[int, str], None]

DEFAULT_MAX_DECOMPRESSED_BYTES = 2 * 2**30
# Reading dominates; the metrics stage gets the last stretch of the bar.
_READING_SHARE_PCT = 90

NO_GPU_EVENTS_MESSAGE = (
    "no GPU events found: was the profiler run with CUDA activities? "
    "(torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]))"
)


def analyze_traces(
    paths: Sequence[Path],
    *,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
    hta_ns_rounding: bool = False,
    progress: Progress | None = None,
) -> TraceSummary:
    """Analyse one upload: each path is a trace (.json, .json.gz, any name) or a zip of them,
    one trace per rank; an Nsight Systems SQLite export; or an nvidia-smi CSV log (plain,
    gzipped or zipped). Formats may be mixed in one upload.

    Raises TraceError, with a message for the person who uploaded, when any file is not one of
    these or cannot be read, or when no rank has GPU events. A CPU-only rank among GPU ranks is
    reported (cpu_only=True, zeros) with a warning instead.

    hta_ns_rounding reproduces HTA's rounding of ns-resolution traces to whole microseconds
    (start up, end down); it is off by default because it shrinks every event.
    """
    paths = [Path(path) for path in paths]
    if not paths:
        raise TraceError("no files were uploaded")
    reporter = _ProgressReporter(progress, paths)
    warnings: list[str] = []
    parsed: list[ParsedTrace] = []
    per_gpu: list[RankSummary] = []  # from nsys exports and nvidia-smi logs, already summarised
    files: list[str] = []
    for index, path in enumerate(paths):
        reporter.start_file(index)
        for source in open_sources(
            path, cap_bytes=max_decompressed_bytes, on_read=reporter.on_read, warn=warnings.append
        ):
            files.append(source.name)
            if source.kind is Kind.JSON:
                trace = parse_trace(source.reader, label=source.name)
                warnings.extend(trace.warnings)
                parsed.append(trace)
            elif source.kind is Kind.NVIDIA_SMI:
                per_gpu.extend(
                    summarize_nvidia_smi(source.reader, label=source.name, warnings=warnings)
                )
            else:  # SQLite, which open_sources yields only for the uploaded file itself
                per_gpu.extend(summarize_nsys(path, label=source.name, warnings=warnings))
    reporter.report(_READING_SHARE_PCT, "metrics")
    if not per_gpu and not any(len(trace.events.gpu) for trace in parsed):
        raise TraceError(NO_GPU_EVENTS_MESSAGE)
    ranks = [
        summarize_rank(trace, ns_rounding=hta_ns_rounding, warnings=warnings) for trace in parsed
    ]
    warnings.extend(_rank_warnings(ranks))
    ranks.extend(per_gpu)
    ranks.sort(key=lambda summary: (summary.rank is None, summary.rank or 0, summary.file))
    reporter.report(100, "done")
    return TraceSummary(ranks=ranks, files=files, warnings=warnings)


def _rank_warnings(ranks: list[RankSummary]) -> list[str]:
    """Checks on Kineto ranks: their rank numbers come from distributedInfo, while nsys and
    nvidia-smi summaries are numbered by GPU index, which repeats across hosts."""
    warnings = []
    seen = Counter(summary.rank for summary in ranks if summary.rank is not None)
    for rank, count in sorted(seen.items()):
        if count > 1:
            files = ", ".join(summary.file for summary in ranks if summary.rank == rank)
            warnings.append(f"rank {rank} appears in {count} files ({files}); are they one job?")
    if len(ranks) > 1 and any(summary.rank is None for summary in ranks):
        warnings.append("some traces carry no distributedInfo, so their rank is unknown")
    world_sizes = {summary.world_size for summary in ranks if summary.world_size is not None}
    if len(world_sizes) == 1:
        (world_size,) = world_sizes
        if len(seen) < world_size and len(ranks) > 1:
            warnings.append(f"{len(seen)} of {world_size} ranks uploaded")
    return warnings


class _ProgressReporter:
    """Percent of the upload's bytes read so far, reported only when the integer changes."""

    def __init__(self, callback: Progress | None, paths: list[Path]) -> None:
        self._callback = callback
        self._sizes = [_size(path) for path in paths]
        self._total = max(sum(self._sizes), 1)
        self._done_before = 0
        self._last: tuple[int, str] | None = None

    def start_file(self, index: int) -> None:
        self._done_before = sum(self._sizes[:index])
        self.report(_READING_SHARE_PCT * self._done_before // self._total, "reading")

    def on_read(self, raw: BinaryIO) -> None:
        if self._callback is None:
            return
        try:
            position = raw.tell()
        except (OSError, ValueError):
            return
        done = self._done_before + position
        self.report(min(_READING_SHARE_PCT, _READING_SHARE_PCT * done // self._total), "reading")

    def report(self, pct: int, stage: str) -> None:
        if self._callback is not None and (pct, stage) != self._last:
            self._last = (pct, stage)
            self._callback(pct, stage)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
