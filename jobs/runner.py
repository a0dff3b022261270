"""The analysis, run in a child process with an address-space limit.

A malformed or hostile upload can then only exhaust or crash this child: the worker sees a
clear error instead of being killed by the kernel's OOM killer. Plain Python, no Django:

    python -m jobs.runner --kind trace --max-decompressed-bytes N FILE...

Writes one JSON object to stdout ({"report": ...} or {"error": "..."}) and progress lines
("PROGRESS <pct> <stage>") to stderr.
"""

import argparse
import json
import re
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_INPUT_ERROR = 0, 2
VERSION = "0.1.0"


def _progress(pct: int, stage: str) -> None:
    print(f"PROGRESS {pct} {stage}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kind", required=True, choices=["trace", "codescan"])
    parser.add_argument("--max-decompressed-bytes", type=int, required=True)
    parser.add_argument("--names", help="JSON list of the files' uploaded names")
    parser.add_argument("files", nargs="+", type=Path)
    args = parser.parse_args(argv)
    given = [str(name) for name in json.loads(args.names or "[]")]
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
