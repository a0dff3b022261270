"""Scan one file's bytes with the scanner and rules of its kind."""

from jobs.domain.codescan.build import BUILD_DETECTORS, BuildScanner
from jobs.domain.codescan.candidates import FileScan, RepoFacts
from jobs.domain.codescan.cxx import CXX_DETECTORS, CxxScanner
from jobs.domain.codescan.detect import FileScanner
from jobs.domain.codescan.kinds import C_FAMILY, Kind
from jobs.domain.codescan.layers import layer_reason
from jobs.domain.codescan.python import PYTHON_DETECTORS, PythonScanner
from jobs.domain.codescan.text import SourceText


def scan_file(kind: Kind, path: str, data: bytes, facts: RepoFacts) -> FileScan:
    """Candidates and evidence of one file; repo-wide facts go into `facts`."""
    result = FileScan(path, kind.value, layer_reason(path, data))
    source = SourceText(path, data)
    scanner: FileScanner
    if kind in C_FAMILY:
        scanner = CxxScanner(kind, source, facts, result, CXX_DETECTORS)
    elif kind is Kind.PYTHON:
        scanner = PythonScanner(kind, source, facts, result, PYTHON_DETECTORS)
    else:
        scanner = BuildScanner(kind, source, facts, result, BUILD_DETECTORS[kind])
    scanner.run()
    return result
