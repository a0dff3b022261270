"""Read what a job measured and summarise it the way Holistic Trace Analysis does.

One sub-package per format (`kineto`, `nsys`, `nvidia_smi`); the shared parts stay here: the
sniffer and byte sources that recognise a file by content, the GPU work and its metrics, kernel
names, and the summaries every format produces. Plain Python, importing nothing outside
jobs.domain.traces: the Celery task runs `analyze_traces` in a memory-capped child process.
"""

from jobs.domain.traces.analyze import analyze_traces
from jobs.domain.traces.errors import TraceError
from jobs.domain.traces.summary import KernelTotal, RankSummary, TraceSummary

__all__ = ["KernelTotal", "RankSummary", "TraceError", "TraceSummary", "analyze_traces"]
