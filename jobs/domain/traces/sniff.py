"""Tell what a file is from its first bytes, never from its name.

People upload whatever their browser offers them: screenshots renamed .json, tarballs, CSV logs.
Naming the thing they sent is the most useful error we can give. Three formats are analysed:
Kineto JSON, Nsight Systems SQLite exports, and nvidia-smi --query-gpu CSV logs.
"""

from enum import Enum

from jobs.domain.traces.errors import TraceError

# Enough for the tar header's "ustar" marker at offset 257.
HEAD_BYTES = 512

UTF8_BOM = b"\xef\xbb\xbf"
_JSON_WHITESPACE = b" \t\r\n"


class Kind(Enum):
    GZIP = "gzip"
    ZIP = "zip"
    JSON = "json"
    SQLITE = "SQLite database"
    NVIDIA_SMI = "nvidia-smi log"


_MAGIC: tuple[tuple[bytes, Kind], ...] = (
    (b"\x1f\x8b", Kind.GZIP),
    (b"PK\x03\x04", Kind.ZIP),
    (b"PK\x05\x06", Kind.ZIP),  # an empty archive: still a zip, it just has no members
    (b"SQLite format 3\x00", Kind.SQLITE),
)
# The columns an nvidia-smi --query-gpu log must have for us to say anything about it.
_NVIDIA_SMI_MARKERS = ("utilization.gpu", "memory.used")

_NOT_TRACES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "this is a PNG image, not a trace"),
    (b"\xff\xd8\xff", "this is a JPEG image, not a trace"),
    (b"GIF87a", "this is a GIF image, not a trace"),
    (b"GIF89a", "this is a GIF image, not a trace"),
    (b"%PDF-", "this is a PDF document, not a trace"),
    (b"\x7fELF", "this is an ELF executable or library, not a trace"),
    (b"BZh", "this is bzip2-compressed: recompress it with gzip or zip, or upload the .json"),
    (b"\xfd7zXZ\x00", "this is xz-compressed: recompress it with gzip or zip, or upload the .json"),
    (b"\x28\xb5\x2f\xfd", "this is zstd-compressed: recompress it with gzip or zip"),
    (b"7z\xbc\xaf\x27\x1c", "this is a 7-Zip archive: upload a .zip or the trace files themselves"),
    (b"Rar!\x1a\x07", "this is a RAR archive: upload a .zip or the trace files themselves"),
)


def sniff(head: bytes) -> Kind:
    """Classify a file by its first HEAD_BYTES bytes, or raise TraceError saying what it is."""
    if not head:
        raise TraceError("the file is empty")
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    for magic, message in _NOT_TRACES:
        if head.startswith(magic):
            raise TraceError(message)
    if head[257:262] == b"ustar":
        raise TraceError("this is a tar archive: upload a .zip or the trace files themselves")
    body = head.removeprefix(UTF8_BOM).lstrip(_JSON_WHITESPACE)
    if not body or body[:1] in (b"{", b"["):
        # All whitespace so far is still possibly JSON; the parser has the final word.
        return Kind.JSON
    if _is_nvidia_smi_header(body):
        return Kind.NVIDIA_SMI
    raise TraceError(_describe_other(head))


def _is_nvidia_smi_header(body: bytes) -> bool:
    first_line = body.split(b"\n", 1)[0].decode("utf-8", errors="replace")
    return all(marker in first_line for marker in _NVIDIA_SMI_MARKERS)


def _describe_other(head: bytes) -> str:
    text = head.decode("utf-8", errors="replace")
    if _mostly_printable(text):
        first_line = text.strip().splitlines()[0][:60]
        return (
            f"this is plain text, not a JSON trace (it starts {first_line!r}); nvidia-smi logs "
            "are read when their header names utilization.gpu and memory.used"
        )
    return "this is binary data of an unknown kind, not a JSON trace or an Nsight export"


def _mostly_printable(text: str) -> bool:
    """Text files (CSV logs, READMEs) versus binaries; U+FFFD marks bytes that were not UTF-8."""
    if not text.strip():
        return False
    printable = sum(1 for ch in text if ch in "\r\n\t" or (ch.isprintable() and ch != "\ufffd"))
    return printable >= 0.95 * len(text)
