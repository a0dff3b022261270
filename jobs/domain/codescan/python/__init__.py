"""Python sources: the scanner (syntax.py) and the rules, one module per concern.

The order of the detector lists matters where two patterns can match at one offset: the first
that counts there wins (COMM003's `nvidia-smi topo` before TOOL001's `nvidia-smi`; DEP001's
import before DEP002's requirement string).
"""

from jobs.domain.codescan.detect import DetectorSet
from jobs.domain.codescan.python import collectives, device, memory, precision, toolchain
from jobs.domain.codescan.python.syntax import PythonScanner

PYTHON_DETECTORS = DetectorSet(
    [
        *device.DETECTORS,
        *precision.DETECTORS,
        *collectives.DETECTORS,
        *memory.DETECTORS,
        *toolchain.DETECTORS,
    ]
)
__all__ = ["PYTHON_DETECTORS", "PythonScanner"]
