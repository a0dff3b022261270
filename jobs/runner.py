"""The analysis, run in a child process with an address-space limit.

A malformed or hostile upload can then only exhaust or crash this child: the worker sees a
clear error instead of being killed by the kernel's OOM killer. Plain Python, no Django:

    python -m jobs.runner --kind trace --max-decompressed-bytes N FILE...

Writes one JSON object to stdout ({"report": ...} or {"error": "..."}) and progress lines
("PROGRESS <pct> <stage>") to stderr.
"""

import argparse
import json
import shutil
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

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
    if args.kind == "codescan":
        return _scan(args.files, json.loads(args.names or "[]"))
    from jobs.domain.traces import TraceError, analyze_traces

    # Files are stored under our own names; messages and reports use the uploaded ones.
    names = dict(
        zip((path.name for path in args.files), json.loads(args.names or "[]"), strict=False)
    )

    def as_uploaded(text: str) -> str:
        for stored, uploaded in names.items():
            text = text.replace(stored, uploaded)
        return text

    try:
        summary = analyze_traces(
            args.files, max_decompressed_bytes=args.max_decompressed_bytes, progress=_progress
        )
    except TraceError as error:
        print(json.dumps({"error": as_uploaded(str(error))}))
        return EXIT_INPUT_ERROR
    except MemoryError:
        print(
            json.dumps(
                {
                    "error": "the analysis needs more memory than its limit allows: "
                    "upload fewer or smaller traces"
                }
            )
        )
        return EXIT_INPUT_ERROR
    print(as_uploaded(json.dumps({"report": asdict(summary)})))
    return EXIT_OK


ARCHIVE_MAGIC = (b"PK\x03\x04", b"\x1f\x8b")


def _scan(files: list[Path], names: list[str]) -> int:
    """One archive is scanned in memory, member by member; single files are laid out under
    their uploaded names (base names only) in a private temporary directory and scanned."""
    from jobs.domain.codescan import ScanError, scan_archive, scan_paths, to_sarif

    try:
        if len(files) == 1 and files[0].read_bytes()[:4].startswith(ARCHIVE_MAGIC):
            report = scan_archive(files[0], progress=_progress)
        else:
            with tempfile.TemporaryDirectory(prefix="scan-") as tmp:
                for index, path in enumerate(files):
                    name = Path(names[index] if index < len(names) else path.name).name
                    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in name)
                    shutil.copyfile(path, Path(tmp) / (safe or f"file{index}"))
                report = scan_paths(Path(tmp), progress=_progress)
    except ScanError as error:
        print(json.dumps({"error": str(error)}))
        return EXIT_INPUT_ERROR
    except MemoryError:
        print(
            json.dumps(
                {
                    "error": "the scan needs more memory than its limit allows: "
                    "upload a smaller archive"
                }
            )
        )
        return EXIT_INPUT_ERROR
    print(
        json.dumps(
            {"report": {**asdict(report), "sarif": to_sarif(report, tool_version=VERSION)}},
            default=str,
        )
    )
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
