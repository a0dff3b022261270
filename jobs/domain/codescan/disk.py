"""A directory (or one file) on disk, walked without following links.

Links are reported, not followed: one could point anywhere on the machine. Devices and FIFOs
are reported unopened (opening a FIFO blocks). Vendored trees are pruned whole, so a checked-in
node_modules/ or .git/ costs one entry, not a walk.
"""

import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

from jobs.domain.codescan.errors import ScanError
from jobs.domain.codescan.kinds import VENDORED_DIRS, vendored_reason
from jobs.domain.codescan.members import Budget, Member
from jobs.domain.codescan.model import Skipped

Progress = Callable[[float], None]  # fraction of the files read, 0..1


def read_tree(root: Path, *, budget: Budget, progress: Progress) -> Iterator[Member | Skipped]:
    try:
        mode = root.lstat().st_mode
    except OSError as exc:
        raise ScanError(f"{root}: cannot be read ({exc.strerror})") from None
    if stat.S_ISREG(mode):
        yield file_member(root, root.name, budget, uploaded=True)
        return
    if not stat.S_ISDIR(mode):
        raise ScanError(f"{root}: not a directory or a regular file")
    entries = list(_walk(root, ""))
    for index, entry in enumerate(entries):
        progress(index / max(len(entries), 1))
        if isinstance(entry, Skipped):
            yield entry
        else:
            path, relative = entry
            yield file_member(path, relative, budget)


def _walk(folder: Path, prefix: str) -> Iterator[tuple[Path, str] | Skipped]:
    try:
        with os.scandir(folder) as listing:
            children = sorted(listing, key=lambda child: child.name)
    except OSError as exc:
        yield Skipped(prefix or ".", f"cannot be listed ({exc.strerror})")
        return
    for child in children:
        relative = f"{prefix}{child.name}"
        mode = child.stat(follow_symlinks=False).st_mode
        if stat.S_ISLNK(mode):
            yield Skipped(relative, "symlink")
        elif stat.S_ISDIR(mode):
            if child.name.lower() in VENDORED_DIRS:
                yield Skipped(relative + "/", vendored_reason(relative))
            else:
                yield from _walk(Path(child.path), relative + "/")
        elif stat.S_ISREG(mode):
            yield Path(child.path), relative
        else:
            yield Skipped(relative, "device file")


def file_member(path: Path, relative: str, budget: Budget, *, uploaded: bool = False) -> Member:
    """The file at `path`, scanned as `relative`; it reads at most cap_bytes + 1 bytes."""

    def read(cap_bytes: int) -> bytes:
        with path.open("rb") as handle:
            data = handle.read(cap_bytes + 1)
        budget.spend(len(data))
        return data

    return Member(relative, path.stat().st_size, read, uploaded=uploaded)
