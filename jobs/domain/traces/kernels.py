"""Kernel type by name, exactly as Holistic Trace Analysis 0.5.0 decides it (hta/utils/utils.py)."""

import re
from enum import StrEnum


class KernelType(StrEnum):
    COMPUTATION = "computation"
    COMMUNICATION = "communication"
    MEMORY = "memory"
    # HTA's OTHER: names containing "Sync" (cuda_sync rows such as "Stream Sync") or "Memcpy"
    # not at the start. They count as busy GPU time but not as compute.
    OTHER = "other"


_COMMUNICATION = re.compile(r"^nccl.*Kernel")  # RCCL kernels on AMD are named nccl* too
_MEMORY = re.compile(r"^(Memcpy|Memset|dma)")
_NOT_COMPUTE = re.compile(r".*(Memcpy|Sync)")
_MEMCPY_KIND = re.compile(r"^Memcpy (\w+)")


def kernel_type(name: str) -> KernelType:
    if _COMMUNICATION.match(name):
        return KernelType.COMMUNICATION
    if _MEMORY.match(name):
        return KernelType.MEMORY
    if _NOT_COMPUTE.match(name):
        return KernelType.OTHER
    return KernelType.COMPUTATION


def memcpy_kind(name: str) -> str | None:
    """The copy direction: "Memcpy HtoD (Pageable -> Device)" gives "HtoD"; None if no copy."""
    if not name.startswith("Memcpy"):
        return None
    match = _MEMCPY_KIND.match(name)
    return match.group(1) if match else "other"
