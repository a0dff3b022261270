"""C, C++ and CUDA sources: the scanner (syntax.py) and the rules, one module per concern.

The order of the detector lists matters where two patterns can match at one offset: the first
that counts there wins (COMM003's `nvmlDeviceGetNvLink*` before TOOL002's `nvml*`; MEM001's
`40 * 1024 * 1024 * 1024` before MEM003's `40 * 1024 * 1024`).
"""

from jobs.domain.codescan.cxx import assembly, matmul, memory, vendor, warps
from jobs.domain.codescan.cxx.syntax import CxxScanner
from jobs.domain.codescan.detect import DetectorSet

CXX_DETECTORS = DetectorSet(
    [
        *matmul.DETECTORS,
        *assembly.DETECTORS,
        *vendor.DETECTORS,
        *memory.DETECTORS,
        *warps.DETECTORS,
    ]
)
__all__ = ["CXX_DETECTORS", "CxxScanner"]
