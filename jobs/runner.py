"""The analysis child and its protocol, both halves in one module. Plain Python, no Django.

The analysis runs in a child process with an address-space limit, so a malformed or hostile
upload can only exhaust or crash the child: the worker sees a clear error instead of being
killed by the kernel's OOM killer. The parent calls `run_analysis`; the child is

    python -m jobs.runner --kind trace --max-decompressed-bytes N --names JSON FILE...

which writes one JSON object to stdout ({"report": ...} or {"error": "..."}) and progress lines
("PROGRESS <pct> <stage>") to stderr.
"""

import argparse
import json
import re
import resource
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from catalog.domain.json_depth import json_loads_limited

EXIT_OK, EXIT_INPUT_ERROR = 0, 2
VERSION = "0.1.0"
_PROGRESS = "PROGRESS "


@dataclass(frozen=True)
class AnalysisLimits:
    memory_bytes: int  # the child's address space
    max_decompressed_bytes: int
    timeout_s: float


class AnalysisTimedOut(Exception):
    """The child ran past its time limit and was killed."""


def run_analysis(
    *,
    kind: str,
    files: Sequence[tuple[str | Path, str]],
    limits: AnalysisLimits,
    on_progress: Callable[[int, str], None],
    cwd: Path,
) -> dict:
    """Run the child over `files` (stored path, uploaded name) and return what it wrote:
    {"report": ...} or {"error": "..."}. Raises AnalysisTimedOut; anything raised into the
    caller meanwhile (a task's soft time limit) kills the child first."""
    command = [
        sys.executable,
        "-m",
        "jobs.runner",
        "--kind",
        kind,
        "--max-decompressed-bytes",
        str(limits.max_decompressed_bytes),
        "--names",
        json.dumps([name for _, name in files]),
        *[str(path) for path, _ in files],
    ]

    def limit_memory() -> None:  # runs in the child, before exec
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))

    child = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=limit_memory,
        cwd=cwd,
    )

    # The report comes on stdout, read by a thread; progress is read here, so the caller's
    # on_progress runs in the caller's thread (and its database connection).
    output: list[str] = []
    reader = threading.Thread(target=lambda: output.append(child.stdout.read()), daemon=True)
    reader.start()
    timed_out = threading.Event()

    def stop() -> None:
        timed_out.set()
        child.kill()

    watchdog = threading.Timer(limits.timeout_s, stop)
    watchdog.start()
    try:
        for line in child.stderr:
            if line.startswith(_PROGRESS):
                _, pct, stage = line.rstrip("\n").split(" ", 2)
                on_progress(int(pct), stage)
        child.wait()
    except BaseException:
        child.kill()
        child.wait()
        raise
    finally:
        watchdog.cancel()
        reader.join(5)
    if timed_out.is_set():
        raise AnalysisTimedOut(limits.timeout_s)
    if child.returncode < 0:
        return {
            "error": f"the analysis process was killed by signal {-child.returncode} "
            "(out of memory?): upload fewer or smaller files"
        }
    try:
        return json_loads_limited("".join(output))
    except ValueError:
        return {"error": f"the analysis process failed (exit {child.returncode})"}


def _progress(pct: int, stage: str) -> None:
    print(f"{_PROGRESS}{pct} {stage}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kind", required=True, choices=["trace", "codescan"])
    parser.add_argument("--max-decompressed-bytes", type=int, required=True)
    parser.add_argument("--names", help="JSON list of the files' uploaded names")
    parser.add_argument("files", nargs="+", type=Path)
    args = parser.parse_args(argv)
    given = [str(name) for name in json_loads_limited(args.names or "[]")]
    names = [given[i] if i < len(given) else path.name for i, path in enumerate(args.files)]
    if args.kind == "codescan":
        return _scan(args.files, names)
    from jobs.domain.traces import TraceError, analyze_traces

    as_uploaded = _uploaded_names(
        {path.name: name for path, name in zip(args.files, names, strict=True)}
    )
    try:
        summary = analyze_traces(
            args.files, max_decompressed_bytes=args.max_decompressed_bytes, progress=_progress
        )
    except TraceError as error:
        return _fail(as_uploaded(str(error)))
    except MemoryError:
        return _fail(
            "the analysis needs more memory than its limit allows: upload fewer or smaller traces"
        )
    print(json.dumps({"report": as_uploaded(asdict(summary))}))
    return EXIT_OK


def _fail(error: str) -> int:
    print(json.dumps({"error": error}))
    return EXIT_INPUT_ERROR


def _uploaded_names(stored_to_uploaded: dict[str, str]) -> Callable[[Any], Any]:
    """Files are stored under our own names; reports and messages use the uploaded ones.

    Renames inside the Python values, before anything is encoded, so a name with quotes,
    backslashes or newlines is data, never JSON text. One pass of one pattern (longest stored
    name first): a name already put in is never replaced again, and a stored name that is part
    of another one does not match inside it.
    """
    stored = sorted((name for name in stored_to_uploaded if name), key=len, reverse=True)
    pattern = re.compile("|".join(map(re.escape, stored))) if stored else None

    def rename(value: Any) -> Any:
        if pattern is None:
            return value
        if isinstance(value, str):
            return pattern.sub(lambda match: stored_to_uploaded[match.group()], value)
        if isinstance(value, dict):
            return {key: rename(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [rename(item) for item in value]
        return value

    return rename


def _scan(files: list[Path], names: list[str]) -> int:
    """The uploads are scanned in place under their uploaded names (scan_uploads), and the
    stored report lists a capped number of findings (cap_findings); its SARIF too."""
    from jobs.domain.codescan import ScanError, Upload, cap_findings, scan_uploads, to_sarif

    as_uploaded = _uploaded_names(
        {path.name: name for path, name in zip(files, names, strict=True)}
    )
    uploads = [Upload(path, name) for path, name in zip(files, names, strict=True)]
    try:
        report = cap_findings(scan_uploads(uploads, progress=_progress))
    except ScanError as error:
        return _fail(as_uploaded(str(error)))
    except MemoryError:
        return _fail("the scan needs more memory than its limit allows: upload a smaller archive")
    print(
        json.dumps(
            {"report": {**asdict(report), "sarif": to_sarif(report, tool_version=VERSION)}},
            default=str,
        )
    )
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
