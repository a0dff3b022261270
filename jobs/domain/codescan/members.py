"""A file of the upload, as the readers (disk, zip, tar) hand it to the scan, and the byte
budget they all draw on."""

import re
from collections.abc import Callable
from dataclasses import dataclass

from jobs.domain.codescan.errors import ScanError

_DRIVE = re.compile(r"[A-Za-z]:")


def format_bytes(size_bytes: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size_bytes >= scale:
            return f"{size_bytes / scale:.0f} {unit}"
    return f"{size_bytes} bytes"


@dataclass(frozen=True)
class Member:
    """One regular file. `read(cap_bytes)` returns at most cap_bytes + 1 bytes, so a caller
    learns that a file is over its cap without holding more of it."""

    path: str  # relative, posix
    size_bytes: int  # as declared (an archive header can lie; read() never trusts it)
    read: Callable[[int], bytes]
    # A file the user uploaded (or named) itself, not a member of an archive or folder: when
    # it is not scanned, the report lists it with the reason, whatever its type.
    uploaded: bool = False


class Budget:
    """Decompressed bytes read so far; past the cap the whole scan stops with a ScanError."""

    def __init__(self, cap_bytes: int) -> None:
        self.cap_bytes = cap_bytes
        self.spent_bytes = 0

    def spend(self, size_bytes: int) -> None:
        self.spent_bytes += size_bytes
        if self.spent_bytes > self.cap_bytes:
            raise ScanError(
                f"the upload decompresses to more than {format_bytes(self.cap_bytes)}; "
                "upload the source tree without data, checkpoints or build outputs"
            )


def unsafe_name_reason(name: str) -> str | None:
    """Why an archive member's name must not be used as a path, or None when it is safe.

    Backslashes count as separators: a zip written on Windows may use them, and an extractor
    there would follow `..\\..\\`.
    """
    if "\0" in name:
        return "name contains a NUL byte"
    normalized = name.replace("\\", "/")
    if normalized.startswith("/") or _DRIVE.match(normalized):
        return "absolute path"
    if ".." in normalized.split("/"):
        return "path contains .."
    return None


def clean_name(name: str) -> str:
    """'./a//b' -> 'a/b' (call only on names unsafe_name_reason accepted)."""
    return "/".join(part for part in name.replace("\\", "/").split("/") if part not in ("", "."))
