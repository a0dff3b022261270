"""Turn uploaded files into byte streams, one per trace or log, with every size capped.

An upload is a plain JSON trace or nvidia-smi CSV log, a gzipped one, or a zip of either (one
member per rank), or an Nsight Systems SQLite export. Each stream counts the bytes it hands out
and stops at the cap, so a gzip or zip bomb costs at most `max_decompressed_bytes` of reading,
never that much memory: nothing is decompressed whole. SQLite is read in place (it needs random
access), so it must be uploaded on its own, uncompressed, and its size is the one capped.
"""

import gzip
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

from jobs.domain.traces.errors import TraceError
from jobs.domain.traces.sniff import HEAD_BYTES, UTF8_BOM, Kind, sniff

MAX_ZIP_MEMBERS = 256

_CHUNK_BYTES = 1 << 20
# What a zip may carry besides traces without it being the user's mistake.
_ZIP_JUNK_PREFIXES = ("__MACOSX/",)
# The kinds parsed from a stream, so they may come gzipped or inside a zip.
_STREAMED = (Kind.JSON, Kind.NVIDIA_SMI)


class Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


@dataclass
class TraceSource:
    """One trace's bytes, ready for the parser of its kind; valid until the next source is
    produced. An SQLite source is always the uploaded file itself, read in place from its path
    (the reader then holds only the sniffed head)."""

    name: str
    reader: Readable
    kind: Kind = Kind.JSON


def format_bytes(size_bytes: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size_bytes >= scale:
            value = size_bytes / scale
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{size_bytes} bytes"


class CappedReader:
    """Hands out a stream's bytes, counting them, and raises TraceError past the cap.

    It also turns the decompressors' own exceptions (EOFError on a cut-short gzip, zlib.error,
    BadGzipFile, BadZipFile) into messages a person can act on, and lets `head` bytes that were
    already read for sniffing be served first.
    """

    def __init__(
        self,
        inner: Readable,
        *,
        label: str,
        cap_bytes: int,
        compression: str | None = None,
        on_read: Callable[[], None] | None = None,
    ) -> None:
        self._inner = inner
        self._label = label
        self._cap_bytes = cap_bytes
        self._compression = compression
        self._on_read = on_read
        self._pending = b""
        self.bytes_read = 0

    def unread(self, data: bytes) -> None:
        """Put sniffed bytes back in front of the stream (they were counted when first read)."""
        self._pending = data + self._pending

    def read(self, size: int = -1, /) -> bytes:
        if size is None or size < 0:
            # Read-all still goes chunk by chunk so the cap trips before memory fills.
            parts = []
            while chunk := self.read(_CHUNK_BYTES):
                parts.append(chunk)
            return b"".join(parts)
        if self._pending:
            data, self._pending = self._pending[:size], self._pending[size:]
            return data
        data = self._read_inner(size)
        self.bytes_read += len(data)
        if self.bytes_read > self._cap_bytes:
            raise TraceError(
                f"{self._label}: decompressed size exceeds {format_bytes(self._cap_bytes)}; "
                "profile fewer steps per trace file (schedule(active=...)) or split the upload"
            )
        if self._on_read is not None:
            self._on_read()
        return data

    def _read_inner(self, size: int) -> bytes:
        what = self._compression or "file"
        try:
            return self._inner.read(size)
        except EOFError:
            raise TraceError(
                f"{self._label}: truncated {what} stream: the file ends early "
                "(was the upload or copy interrupted?)"
            ) from None
        except (zlib.error, gzip.BadGzipFile, zipfile.BadZipFile) as exc:
            raise TraceError(f"{self._label}: corrupt {what} data ({exc})") from None


def read_head(reader: CappedReader) -> bytes:
    """Read up to HEAD_BYTES for sniffing and push them back; a leading UTF-8 BOM is dropped
    because the JSON parser rejects it and some Windows tools write one."""
    head = b""
    while len(head) < HEAD_BYTES and (chunk := reader.read(HEAD_BYTES - len(head))):
        head += chunk
    reader.unread(head.removeprefix(UTF8_BOM))
    return head


def open_sources(
    path: Path,
    *,
    cap_bytes: int,
    on_read: Callable[[BinaryIO], None] | None = None,
    warn: Callable[[str], None] = lambda message: None,
) -> Iterator[TraceSource]:
    """Yield the traces in one uploaded file: one for JSON or gzip, one per member of a zip.

    on_read(raw_file) is called as bytes stream through, so a caller can report progress from
    the raw file's position.
    """
    label = path.name
    try:
        raw = path.open("rb")
    except OSError as exc:
        raise TraceError(f"{label}: cannot be read ({exc.strerror})") from None
    with ExitStack() as stack:
        stack.enter_context(raw)
        tick = (lambda: on_read(raw)) if on_read is not None else None
        plain = CappedReader(raw, label=label, cap_bytes=cap_bytes, on_read=tick)
        kind = _sniff(label, read_head(plain))
        if kind is Kind.ZIP:
            yield from _zip_members(raw, label, cap_bytes=cap_bytes, on_read=tick, warn=warn)
        elif kind is Kind.GZIP:
            yield _gunzip(plain, label, cap_bytes=cap_bytes, stack=stack)
        else:
            if kind is Kind.SQLITE:
                _check_file_size(path, label, cap_bytes)
            yield TraceSource(label, plain, kind)


def _sniff(label: str, head: bytes) -> Kind:
    try:
        return sniff(head)
    except TraceError as exc:
        raise TraceError(f"{label}: {exc}") from None


def _check_file_size(path: Path, label: str, cap_bytes: int) -> None:
    size_bytes = path.stat().st_size
    if size_bytes > cap_bytes:
        raise TraceError(
            f"{label}: the SQLite export is {format_bytes(size_bytes)}, over the "
            f"{format_bytes(cap_bytes)} limit; capture a shorter stretch "
            "(nsys profile --duration or --capture-range) and export it again"
        )


def _gunzip(compressed: Readable, label: str, *, cap_bytes: int, stack: ExitStack) -> TraceSource:
    unzipped = stack.enter_context(gzip.GzipFile(fileobj=compressed, mode="rb"))  # type: ignore[arg-type]
    reader = CappedReader(unzipped, label=label, cap_bytes=cap_bytes, compression="gzip")
    kind = _sniff(label, read_head(reader))
    if kind is Kind.SQLITE:
        raise TraceError(
            f"{label}: an SQLite database inside gzip; upload the Nsight Systems export "
            "uncompressed, on its own (it is read in place)"
        )
    if kind not in _STREAMED:
        raise TraceError(
            f"{label}: a {kind.value} inside gzip; upload the trace JSON, gzipped once"
        )
    return TraceSource(label, reader, kind)


def _zip_members(
    raw: BinaryIO,
    label: str,
    *,
    cap_bytes: int,
    on_read: Callable[[], None] | None,
    warn: Callable[[str], None],
) -> Iterator[TraceSource]:
    try:
        archive = zipfile.ZipFile(raw)
    except (zipfile.BadZipFile, OSError) as exc:
        raise TraceError(f"{label}: damaged or truncated zip archive ({exc})") from None
    with archive:
        members = [
            info
            for info in archive.infolist()
            if not info.is_dir() and not info.filename.startswith(_ZIP_JUNK_PREFIXES)
        ]
        if len(members) > MAX_ZIP_MEMBERS:
            raise TraceError(
                f"{label}: {len(members)} files in the zip; at most {MAX_ZIP_MEMBERS} "
                "(one trace per rank) are accepted"
            )
        if not members:
            raise TraceError(f"{label}: the zip archive holds no files")
        yielded = 0
        for info in members:
            member_label = f"{label}/{info.filename}"
            if info.file_size > cap_bytes:
                # The declared size can lie, which CappedReader catches; an honest one
                # lets us refuse without reading.
                raise TraceError(
                    f"{member_label}: decompressed size exceeds {format_bytes(cap_bytes)}"
                )
            with ExitStack() as stack:
                source = _zip_member(archive, info, member_label, cap_bytes, on_read, stack, warn)
                if source is not None:
                    yielded += 1
                    yield source
        if not yielded:
            raise TraceError(f"{label}: the zip archive holds no trace files")


def _zip_member(
    archive: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    label: str,
    cap_bytes: int,
    on_read: Callable[[], None] | None,
    stack: ExitStack,
    warn: Callable[[str], None],
) -> TraceSource | None:
    try:
        member = stack.enter_context(archive.open(info))
    except RuntimeError as exc:  # zipfile's way of saying "encrypted"
        raise TraceError(f"{label}: cannot be opened ({exc}); upload an unencrypted zip") from None
    except (zipfile.BadZipFile, NotImplementedError, OSError) as exc:
        raise TraceError(f"{label}: damaged or unsupported zip member ({exc})") from None
    reader = CappedReader(
        member, label=label, cap_bytes=cap_bytes, compression="zip", on_read=on_read
    )
    head = read_head(reader)  # a damaged member fails here, and fails the upload
    try:
        kind = sniff(head)
    except TraceError as exc:
        # A README or screenshot next to the traces is not worth failing the upload over.
        warn(f"{label}: skipped, {exc}")
        return None
    if kind is Kind.ZIP:
        warn(f"{label}: skipped, a zip inside a zip is not opened")
        return None
    if kind is Kind.SQLITE:
        warn(f"{label}: skipped, an SQLite export inside a zip is not opened; upload it on its own")
        return None
    if kind is Kind.GZIP:
        return _gunzip(reader, label, cap_bytes=cap_bytes, stack=stack)
    return TraceSource(label, reader, kind)
