"""Analyse PyTorch profiler (Kineto) traces the way Holistic Trace Analysis does.

Plain Python: the Celery task runs `analyze_traces` in a subprocess with a memory limit.
"""

from jobs.domain.traces.analyze import analyze_traces
from jobs.domain.traces.errors import TraceError
from jobs.domain.traces.summary import KernelTotal, RankSummary, TraceSummary

__all__ = ["KernelTotal", "RankSummary", "TraceError", "TraceSummary", "analyze_traces"]
