"""Uploaded files as the scan sees them: each one under the name it was uploaded with.

Files are stored under names of our own; the report, the SARIF and every message use the
uploaded ones. Two uploads may share a name (two `kernel.cu`, or `a/kernel.cu` and
`b/kernel.cu` from a browser that keeps only the base name): both are scanned, the later one
under `upload-N/` (N its position among the uploads) so each finding points at one file. The
name itself is kept whole, so its type is still told from it.
"""

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from jobs.domain.codescan.archives import is_archive
from jobs.domain.codescan.disk import file_member
from jobs.domain.codescan.errors import ScanError
from jobs.domain.codescan.kinds import is_archive_name
from jobs.domain.codescan.members import Budget, Member
from jobs.domain.codescan.model import Skipped

Progress = Callable[[float], None]  # fraction of the uploads read, 0..1

ARCHIVE_WITH_OTHERS = (
    "an archive uploaded with other files is not opened: upload the archive on its own"
)
_REPLACEMENT = "\ufffd"  # for a NUL in a name, which PostgreSQL's jsonb cannot store


@dataclass(frozen=True)
class Upload:
    path: Path  # where it is stored
    name: str  # the name it was uploaded under


def upload_paths(names: Sequence[str]) -> list[str]:
    """One distinct relative path per uploaded name, as close to the name as is safe."""
    paths: list[str] = []
    taken: set[str] = set()
    for position, name in enumerate(names, start=1):
        path = _safe_path(name) or f"upload-{position}"
        while path in taken:  # again when an uploaded name itself reads "upload-N/..."
            path = f"upload-{position}/{path}"
        taken.add(path)
        paths.append(path)
    return paths


def _safe_path(name: str) -> str:
    """The name as a relative path: "/" separates folders (so `a/kernel.cu` and `b/kernel.cu`
    stay apart); empty, "." and ".." parts are dropped; every other character is kept."""
    parts = name.replace("\0", _REPLACEMENT).split("/")
    return "/".join(part for part in parts if part not in ("", ".", ".."))


def read_uploads(
    uploads: Sequence[Upload], *, budget: Budget, progress: Progress
) -> Iterator[Member | Skipped]:
    """Each upload as one file to scan (an archive among others is listed, not opened)."""
    for index, (upload, path) in enumerate(
        zip(uploads, upload_paths([u.name for u in uploads]), strict=True)
    ):
        progress(index / max(len(uploads), 1))
        try:
            archive = is_archive(upload.path)
        except OSError as exc:
            raise ScanError(f"{path}: cannot be read ({exc.strerror})") from None
        if archive or is_archive_name(path):
            yield Skipped(path, ARCHIVE_WITH_OTHERS)
        else:
            yield file_member(upload.path, path, budget, uploaded=True)
