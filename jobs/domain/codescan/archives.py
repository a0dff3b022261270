"""Zip and tar(.gz) uploads read member by member in memory, never extracted to disk.

Only regular files come out as Members; links, devices, unsafe names and encrypted or
over-compressed members come out as Skipped with the reason. Two zip bombs are refused
outright: more members than the cap, and members whose local data overlap (the
"overlapping files" bomb, which Python's zipfile reads happily: one compressed kernel
referenced thousands of times). A tar.gz bomb draws every decompressed byte, skipped or not,
from the Budget and so trips the total cap.
"""

import gzip
import itertools
import stat
import struct
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from jobs.domain.codescan.errors import ScanError
from jobs.domain.codescan.limits import ScanLimits
from jobs.domain.codescan.members import Budget, Member, clean_name, unsafe_name_reason
from jobs.domain.codescan.model import Skipped

_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_GZIP_MAGIC = b"\x1f\x8b"
_TAR_MAGIC_OFFSET = 257
_HEAD_BYTES = _TAR_MAGIC_OFFSET + 8
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature ... name length, extra length
_LOCAL_HEADER_SIGNATURE = b"PK\x03\x04"
_ZIP_ENCRYPTED_FLAG = 0x1
_UNIX = 3  # ZipInfo.create_system of archives made on Unix, whose modes carry file types
_NOT_AN_ARCHIVE = "is not a zip or tar.gz archive; upload the repository as .zip or .tar.gz"

Progress = Callable[[float], None]  # fraction of the archive read, 0..1


def read_archive(
    path: Path, *, limits: ScanLimits, budget: Budget, progress: Progress, label: str = ""
) -> Iterator[Member | Skipped]:
    """The archive's members. Errors name it `label` (the name it was uploaded under; the
    file's own name when empty): the stored name means nothing to the person who uploaded."""
    label = label or path.name
    try:
        raw = path.open("rb")
    except OSError as exc:
        raise ScanError(f"{label}: cannot be read ({exc.strerror})") from None
    with raw:
        head = raw.read(_HEAD_BYTES)
        raw.seek(0)
        if head.startswith(_ZIP_MAGIC):
            yield from _zip_members(raw, label, limits, budget, progress)
        elif head.startswith(_GZIP_MAGIC):
            yield from _tar_members(raw, label, limits, budget, progress, gzipped=True)
        elif _is_tar(head):
            yield from _tar_members(raw, label, limits, budget, progress, gzipped=False)
        else:
            raise ScanError(f"{label} {_NOT_AN_ARCHIVE}")


def is_archive(path: Path) -> bool:
    """Whether read_archive reads this file (zip, gzip or tar by its first bytes); reads only
    those bytes, however large the file. Raises OSError when it cannot be opened."""
    with path.open("rb") as raw:
        head = raw.read(_HEAD_BYTES)
    return head.startswith((*_ZIP_MAGIC, _GZIP_MAGIC)) or _is_tar(head)


def _is_tar(head: bytes) -> bool:
    return head[_TAR_MAGIC_OFFSET:].startswith(b"ustar")


def _too_many(label: str, limits: ScanLimits) -> ScanError:
    return ScanError(
        f"{label}: more than {limits.max_members:,} members; upload the source tree without "
        "data sets, build outputs or vendored dependencies"
    )


# --- zip ---------------------------------------------------------------------------------


def _member_or_skipped(
    name: str, size_bytes: int, problem: str | None, read: Callable[[int], bytes]
) -> Member | Skipped:
    """Zip and tar alike: a member with an unsafe name, or with the format's `problem`, is
    skipped for that reason (the name's first); any other is read through `read`."""
    reason = unsafe_name_reason(name) or problem
    if reason:
        return Skipped(name, reason)
    return Member(clean_name(name), size_bytes, read)


def _zip_members(
    raw: BinaryIO, label: str, limits: ScanLimits, budget: Budget, progress: Progress
) -> Iterator[Member | Skipped]:
    try:
        archive = zipfile.ZipFile(raw)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ScanError(f"{label}: damaged or truncated zip archive ({exc})") from None
    with archive:
        infos = archive.infolist()
        if len(infos) > limits.max_members:
            raise _too_many(label, limits)
        _refuse_overlapping_entries(raw, label, infos)
        for index, info in enumerate(infos):
            progress(index / max(len(infos), 1))
            if info.is_dir():
                continue
            yield _member_or_skipped(
                info.filename,
                info.file_size,
                _zip_member_problem(info, limits),
                lambda cap, info=info: _read_zip_member(archive, info, cap, budget),
            )


def _refuse_overlapping_entries(raw: BinaryIO, label: str, infos: list[zipfile.ZipInfo]) -> None:
    """Each member's local header + name + extra + compressed data must end before the next
    member's header starts; overlapping ranges are the signature of a zip bomb."""
    spans = []
    for info in infos:
        raw.seek(info.header_offset)
        header = raw.read(_LOCAL_HEADER.size)
        if len(header) < _LOCAL_HEADER.size:
            raise ScanError(f"{label}: damaged zip archive ({info.filename!r} points past the end)")
        signature, name_bytes, extra_bytes = _LOCAL_HEADER.unpack(header)
        if signature != _LOCAL_HEADER_SIGNATURE:
            raise ScanError(f"{label}: damaged zip archive (no local header for {info.filename!r})")
        data_end = info.header_offset + _LOCAL_HEADER.size + name_bytes + extra_bytes
        spans.append((info.header_offset, data_end + info.compress_size, info.filename))
    spans.sort()
    for (_, end, name), (start, _, next_name) in itertools.pairwise(spans):
        if start < end:
            raise ScanError(
                f"{label}: zip members {name!r} and {next_name!r} overlap, which only a zip bomb "
                "does; re-create the archive with a standard zip tool"
            )


def _zip_member_problem(info: zipfile.ZipInfo, limits: ScanLimits) -> str | None:
    if info.create_system == _UNIX:
        mode = info.external_attr >> 16
        if stat.S_ISLNK(mode):
            return "symlink"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
            return "device file"
    if info.flag_bits & _ZIP_ENCRYPTED_FLAG:
        return "encrypted member"
    if info.file_size and info.file_size > limits.max_compression_ratio * max(
        info.compress_size, 1
    ):
        return f"compression ratio over {limits.max_compression_ratio}:1 (a zip bomb?)"
    return None


def _read_zip_member(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, cap_bytes: int, budget: Budget
) -> bytes:
    try:
        with archive.open(info) as member:
            data = member.read(cap_bytes + 1)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError) as exc:
        raise DamagedMember(str(exc)) from None
    budget.spend(len(data))
    return data


class DamagedMember(Exception):
    """A member that cannot be decompressed; the scan skips it and goes on."""


# --- tar ---------------------------------------------------------------------------------


class _CountingReader:
    """The decompressed tar stream, every byte charged to the budget (a tar.gz bomb's
    skipped members cost as much as read ones) and decompression errors made readable."""

    def __init__(self, inner: BinaryIO, label: str, budget: Budget) -> None:
        self._inner = inner
        self._label = label
        self._budget = budget

    def read(self, size: int = -1) -> bytes:
        try:
            data = self._inner.read(size)
        except EOFError:
            raise ScanError(
                f"{self._label}: truncated archive (the upload was cut short?)"
            ) from None
        except (zlib.error, gzip.BadGzipFile, OSError) as exc:
            raise ScanError(f"{self._label}: corrupt compressed data ({exc})") from None
        self._budget.spend(len(data))
        return data


def _tar_members(
    raw: BinaryIO,
    label: str,
    limits: ScanLimits,
    budget: Budget,
    progress: Progress,
    *,
    gzipped: bool,
) -> Iterator[Member | Skipped]:
    total_bytes = max(raw.seek(0, 2), 1)
    raw.seek(0)
    inner = gzip.GzipFile(fileobj=raw, mode="rb") if gzipped else raw
    stream = _CountingReader(inner, label, budget)  # type: ignore[arg-type]
    count = 0
    with _open_tar(stream, label) as archive:
        try:
            for info in archive:
                count += 1
                if count > limits.max_members:
                    raise _too_many(label, limits)
                progress(raw.tell() / total_bytes)
                if info.isdir():
                    continue
                if info.size > budget.cap_bytes - budget.spent_bytes:
                    # Reading past it would spend the budget anyway; say so without the wait.
                    budget.spend(info.size)
                yield _member_or_skipped(
                    info.name,
                    info.size,
                    _tar_member_problem(info),
                    lambda cap, info=info: _read_tar_member(archive, info, cap),
                )
        except tarfile.TarError as exc:
            raise ScanError(f"{label}: damaged tar archive ({exc})") from None


def _open_tar(stream: _CountingReader, label: str) -> tarfile.TarFile:
    try:
        return tarfile.open(fileobj=stream, mode="r|")  # type: ignore[call-overload]
    except tarfile.TarError as exc:
        raise ScanError(f"{label}: damaged tar archive ({exc})") from None


def _tar_member_problem(info: tarfile.TarInfo) -> str | None:
    if info.issym():
        return "symlink"
    if info.islnk():
        return "hardlink"
    if info.ischr() or info.isblk() or info.isfifo():
        return "device file"
    if not info.isreg():
        return f"not a regular file (tar type {info.type!r})"
    return None


def _read_tar_member(archive: tarfile.TarFile, info: tarfile.TarInfo, cap_bytes: int) -> bytes:
    member = archive.extractfile(info)
    if member is None:
        raise DamagedMember("no data")
    return member.read(cap_bytes + 1)
