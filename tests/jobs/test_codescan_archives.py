"""Uploads built to hurt: each member is skipped with a reason or the archive fails with a
ScanError, quickly, in bounded memory, and nothing is ever written to disk.

Every archive is generated in tmp_path by the test itself.
"""

import contextlib
import gzip
import io
import json
import os
import random
import stat
import struct
import subprocess
import sys
import tarfile
import tempfile
import time
import tracemalloc
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from jobs.domain.codescan import ScanError, ScanLimits, ScanReport, scan_archive, scan_paths

REPO_ROOT = Path(__file__).resolve().parents[2]
MIB = 1 << 20
SECONDS = 10.0  # "within seconds", generous for a slow CI machine
PEAK_BYTES = 200 * MIB
KERNEL = b"__global__ void k(float* x) { x[threadIdx.x % 32] = 0; }\n"


def _tree(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*"))


@pytest.fixture(autouse=True)
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Scans run from an empty working directory with an empty temp dir of their own (the
    machine's /tmp is shared), so `nothing_written` can check that both stay empty."""
    for folder in ("cwd", "tmp"):
        (tmp_path / folder).mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))


@contextlib.contextmanager
def nothing_written(tmp_path: Path) -> Iterator[None]:
    """tmp_path gains nothing; the working directory and the temp dir stay empty."""
    before = _tree(tmp_path)
    yield
    assert _tree(tmp_path) == before
    assert os.listdir(Path.cwd()) == []
    assert os.listdir(tempfile.gettempdir()) == []


def bounded_scan(tmp_path: Path, archive: Path, **limits: int) -> ScanReport:
    """scan_archive within seconds, in under PEAK_BYTES of Python allocations, writing nothing."""
    tracemalloc.start()
    started = time.monotonic()
    try:
        with nothing_written(tmp_path):
            return scan_archive(archive, limits=ScanLimits(**limits))
    finally:
        elapsed = time.monotonic() - started
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert elapsed < SECONDS
        assert peak < PEAK_BYTES


def refused(tmp_path: Path, archive: Path, match: str, **limits: int) -> ScanError:
    with pytest.raises(ScanError, match=match) as caught:
        bounded_scan(tmp_path, archive, **limits)
    return caught.value


def write_zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def write_tar(path: Path, members: list[tarfile.TarInfo], data: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for info in members:
            payload = data.get(info.name)
            if payload is not None:
                info.size = len(payload)
            archive.addfile(info, io.BytesIO(payload) if payload is not None else None)
    return path


def tar_entry(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    return info


def skipped(report: ScanReport) -> dict[str, str]:
    return {item.path: item.reason for item in report.skipped}


# --- paths and file types ---------------------------------------------------------------------


def test_zip_slip_and_absolute_paths_are_skipped(tmp_path):
    archive = write_zip(
        tmp_path / "up.zip",
        {
            "../evil.cu": KERNEL,
            "repo/../../evil2.cu": KERNEL,
            "/etc/evil.cu": KERNEL,
            "C:\\evil.cu": KERNEL,
            "..\\..\\evil3.cu": KERNEL,
            "repo/ok.cu": KERNEL,
        },
    )
    report = bounded_scan(tmp_path, archive)
    assert skipped(report) == {
        "../evil.cu": "path contains ..",
        "repo/../../evil2.cu": "path contains ..",
        "/etc/evil.cu": "absolute path",
        "C:\\evil.cu": "absolute path",
        "..\\..\\evil3.cu": "path contains ..",
    }
    assert {f.file for f in report.findings} == {"repo/ok.cu"}
    assert report.files_scanned == 1


def test_zip_symlinks_and_devices_are_skipped(tmp_path):
    path = tmp_path / "links.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for name, mode in (("repo/link.cu", stat.S_IFLNK), ("repo/dev.cu", stat.S_IFCHR)):
            info = zipfile.ZipInfo(name)
            info.create_system = 3
            info.external_attr = (mode | 0o777) << 16
            archive.writestr(info, "/etc/passwd")
        archive.writestr("repo/real.cu", KERNEL)
    report = bounded_scan(tmp_path, path)
    assert skipped(report) == {"repo/link.cu": "symlink", "repo/dev.cu": "device file"}
    assert report.files_scanned == 1


def test_tar_links_devices_and_fifos_are_skipped(tmp_path):
    archive = write_tar(
        tmp_path / "links.tar.gz",
        [
            tar_entry("repo/link.cu", tarfile.SYMTYPE, "/etc/passwd"),
            tar_entry("repo/hard.cu", tarfile.LNKTYPE, "repo/real.cu"),
            tar_entry("repo/dev.cu", tarfile.CHRTYPE),
            tar_entry("repo/fifo.cu", tarfile.FIFOTYPE),
            tar_entry("../escape.cu"),
            tar_entry("/abs.cu"),
            tar_entry("repo/real.cu"),
        ],
        {"repo/real.cu": KERNEL, "../escape.cu": KERNEL, "/abs.cu": KERNEL},
    )
    report = bounded_scan(tmp_path, archive)
    assert skipped(report) == {
        "repo/link.cu": "symlink",
        "repo/hard.cu": "hardlink",
        "repo/dev.cu": "device file",
        "repo/fifo.cu": "device file",
        "../escape.cu": "path contains ..",
        "/abs.cu": "absolute path",
    }
    assert [f.file for f in report.findings] == ["repo/real.cu"]


def test_nested_archives_binaries_and_vendored_trees_are_reported_not_scanned(tmp_path):
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as nested:
        nested.writestr("k.cu", KERNEL)
    archive = write_zip(
        tmp_path / "up.zip",
        {
            "repo/inner.zip": inner.getvalue(),
            "repo/deps.tar.gz": gzip.compress(b"x" * 1000),
            "repo/disguised.py": inner.getvalue(),
            "repo/blob.cu": b"\x00\x01" * 100 + KERNEL,
            "repo/latin1.py": "x = 'caf\xe9'\n".encode("latin-1"),
            "repo/third_party/cutlass/include/gemm.h": KERNEL,
            "repo/third_party/nccl/src/ring.cu": KERNEL,
            "repo/node_modules/x/k.cu": KERNEL,
            "repo/weights.bin": b"\x00" * 1000,
            "repo/k.cu": KERNEL,
        },
    )
    report = bounded_scan(tmp_path, archive)
    assert skipped(report) == {
        "repo/inner.zip": "nested archive",
        "repo/deps.tar.gz": "nested archive",
        "repo/disguised.py": "nested archive",
        "repo/blob.cu": "binary file",
        "repo/latin1.py": "binary file (not UTF-8 text)",
        "repo/third_party/": "vendored third-party tree (third_party/)",
        "repo/node_modules/": "vendored third-party tree (node_modules/)",
    }
    assert {f.file for f in report.findings} == {"repo/k.cu"}
    assert report.files_scanned == 1


def test_members_over_the_size_cap_or_compression_ratio_are_skipped(tmp_path):
    archive = write_zip(
        tmp_path / "up.zip",
        {
            "big.cu": random.Random(0).randbytes(3 * MIB).hex().encode(),
            "zeros.py": b"x = 0" + b" " * (4 * MIB),
            "k.cu": KERNEL,
        },
    )
    report = bounded_scan(tmp_path, archive, max_member_bytes=2 * MIB, max_compression_ratio=200)
    reasons = skipped(report)
    assert reasons["zeros.py"] == "compression ratio over 200:1 (a zip bomb?)"
    assert reasons["big.cu"].startswith("over the member size cap (2 MiB)")
    assert report.files_scanned == 1


# --- bombs ---------------------------------------------------------------------------------------

_LOCAL = struct.Struct("<4s5H3L2H")
_CENTRAL = struct.Struct("<4s6H3L5H2L")
_END = struct.Struct("<4s4H2LH")


def overlapping_zip_bomb(path: Path, entries: int, kernel_bytes: int) -> Path:
    """One compressed kernel, stored once, that `entries` central-directory records all point
    at: each reads back as a full, valid member (David Fifield's overlapping-files bomb)."""
    rng = random.Random(0)
    kernel = "".join(rng.choices("abcdef0123456789\n", k=kernel_bytes)).encode()
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    compressed = deflate.compress(kernel) + deflate.flush()
    crc = zlib.crc32(kernel)
    name = b"0.py"
    local = _LOCAL.pack(
        b"PK\x03\x04", 20, 0, 8, 0, 0x21, crc, len(compressed), len(kernel), len(name), 0
    )
    body = local + name + compressed
    central = b""
    for index in range(entries):
        entry_name = f"{index}.py".encode()
        central += _CENTRAL.pack(
            b"PK\x01\x02", (3 << 8) | 20, 20, 0, 8, 0, 0x21, crc, len(compressed), len(kernel),
            len(entry_name), 0, 0, 0, 0, 0o100644 << 16, 0,
        ) + entry_name  # fmt: skip
    end = _END.pack(b"PK\x05\x06", 0, 0, entries, entries, len(central), len(body), 0)
    path.write_bytes(body + central + end)
    return path


def test_an_overlapping_entry_zip_bomb_is_refused_before_reading(tmp_path):
    bomb = overlapping_zip_bomb(tmp_path / "bomb.zip", entries=5_000, kernel_bytes=MIB)
    assert bomb.stat().st_size < 2 * MIB  # 5,000 x 1 MiB once expanded
    with zipfile.ZipFile(bomb) as archive:  # the stdlib would hand every member out
        assert len(archive.infolist()) == 5_000
    refused(tmp_path, bomb, "overlap, which only a zip bomb does")


def _tar_header(name: str, size_bytes: int) -> bytes:
    info = tarfile.TarInfo(name)
    info.size = size_bytes
    return info.tobuf(format=tarfile.GNU_FORMAT)


def tar_gz_bomb(path: Path, *, units: int, member_bytes: int, repeats: int) -> Path:
    """units x repeats tar members of member_bytes zeros each, written as one gzip member of
    `units` members repeated `repeats` times (gzip readers decompress every member in turn)."""
    unit = _tar_header("zeros.bin", member_bytes) + b"\0" * member_bytes
    block = gzip.compress(unit * units, compresslevel=1)
    with path.open("wb") as out:
        for _ in range(repeats):
            out.write(block)
    return path


def test_a_tar_gz_bomb_trips_the_total_cap(tmp_path):
    bomb = tar_gz_bomb(tmp_path / "bomb.tar.gz", units=64, member_bytes=MIB, repeats=16)
    assert bomb.stat().st_size < 8 * MIB  # 1 GiB decompressed
    refused(tmp_path, bomb, "decompresses to more than 256 MiB", max_total_bytes=256 * MIB)


def test_a_tar_member_declaring_more_than_the_cap_is_refused_at_its_header(tmp_path):
    bomb = tmp_path / "huge.tar.gz"
    bomb.write_bytes(gzip.compress(_tar_header("huge.py", 8 << 30) + b"\0" * 4096))
    refused(tmp_path, bomb, "decompresses to more than 512 MiB")


_CHILD_SCAN = """
import json, resource, sys, time
from jobs.domain.codescan import ScanError, scan_archive
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.monotonic()
try:
    outcome = {"files_scanned": scan_archive(sys.argv[1]).files_scanned}
except ScanError as error:
    outcome = {"error": str(error)}
outcome["elapsed_s"] = time.monotonic() - started
outcome["growth_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(json.dumps(outcome))
"""


def child_scan(tmp_path: Path, archive: Path) -> dict:
    """scan_archive in a fresh process: its own clock and peak RSS, no tracing overhead."""
    with nothing_written(tmp_path):
        result = subprocess.run(
            [sys.executable, "-c", _CHILD_SCAN, str(archive)],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
            env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        )
    outcome = json.loads(result.stdout)
    assert outcome["elapsed_s"] < SECONDS
    assert outcome["growth_kib"] * 1024 < PEAK_BYTES
    return outcome


def test_a_tar_gz_bomb_stays_small_in_a_child_process(tmp_path):
    """Peak RSS growth of a real process scanning a 1 GiB bomb under the default limits."""
    bomb = tar_gz_bomb(tmp_path / "bomb.tar.gz", units=64, member_bytes=MIB, repeats=16)
    outcome = child_scan(tmp_path, bomb)
    assert outcome["error"].startswith("the upload decompresses to more than 512 MiB")


# --- member counts ---------------------------------------------------------------------------


def many_members_zip(path: Path, count: int) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        for index in range(count):
            archive.writestr(f"repo/pkg{index // 1000}/m{index}.py", "x = 1\n")
    return path


def test_twenty_thousand_tiny_members_scan_within_seconds(tmp_path):
    archive = many_members_zip(tmp_path / "many.zip", 20_000)
    assert child_scan(tmp_path, archive)["files_scanned"] == 20_000


def test_one_member_more_than_the_cap_is_refused(tmp_path):
    archive = many_members_zip(tmp_path / "many.zip", 20_001)
    refused(tmp_path, archive, r"more than 20,000 members")


def test_a_tar_with_too_many_members_is_refused(tmp_path):
    archive = tar_gz_bomb(tmp_path / "many.tar.gz", units=101, member_bytes=0, repeats=1)
    refused(tmp_path, archive, r"more than 100 members", max_members=100)


# --- not archives, damaged archives ---------------------------------------------------------


def test_a_file_that_is_no_archive_is_a_clear_error(tmp_path):
    upload = tmp_path / "notes.txt"
    upload.write_text("just text\n")
    refused(tmp_path, upload, "notes.txt is not a zip or tar.gz archive")


def test_a_truncated_tar_gz_is_a_clear_error(tmp_path):
    whole = tar_gz_bomb(tmp_path / "whole.tar.gz", units=4, member_bytes=64 * 1024, repeats=1)
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(whole.read_bytes()[:200])
    refused(tmp_path, cut, "truncated archive|damaged tar archive")


def test_a_corrupt_zip_is_a_clear_error(tmp_path):
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"PK\x03\x04" + b"\xff" * 100)
    refused(tmp_path, broken, "damaged or truncated zip archive")


# --- the same upload, however it arrives -----------------------------------------------------


def test_a_zip_a_tar_gz_and_the_folder_give_the_same_report(tmp_path):
    repo = REPO_ROOT / "tests" / "fixtures" / "codescan" / "repo"
    files = sorted(path for path in repo.rglob("*") if path.is_file())
    zipped = write_zip(
        tmp_path / "repo.zip", {str(p.relative_to(repo)): p.read_bytes() for p in files}
    )
    tarred = tmp_path / "repo.tar.gz"
    with tarfile.open(tarred, "w:gz") as archive:
        for path in files:
            archive.add(path, arcname=str(path.relative_to(repo)))
    from_disk = scan_paths(repo)
    assert from_disk.findings
    for upload in (zipped, tarred):
        report = bounded_scan(tmp_path, upload)
        assert report.findings == from_disk.findings
        assert report.verdicts == from_disk.verdicts
        assert report.scorecard == from_disk.scorecard


def test_progress_is_reported_as_percent_and_stage(tmp_path):
    archive = many_members_zip(tmp_path / "many.zip", 500)
    calls: list[tuple[int, str]] = []
    scan_archive(archive, progress=lambda pct, stage: calls.append((pct, stage)))
    percents = [pct for pct, _ in calls]
    assert percents == sorted(percents) and len(set(percents)) == len(percents)
    assert calls[0] == (0, "scanning") and calls[-1] == (95, "verdicts")


# --- a tree on disk -----------------------------------------------------------------------------


def test_disk_links_and_fifos_are_reported_unfollowed_and_unopened(tmp_path):
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "k.cu").write_bytes(KERNEL)
    (root / "src" / "passwd.py").symlink_to("/etc/passwd")
    (root / "linked_dir").symlink_to(tmp_path, target_is_directory=True)
    os.mkfifo(root / "src" / "pipe.py")  # opening it would block the scan forever
    started = time.monotonic()
    report = scan_paths(root)
    assert time.monotonic() - started < SECONDS
    assert skipped(report) == {
        "linked_dir": "symlink",
        "src/passwd.py": "symlink",
        "src/pipe.py": "device file",
    }
    assert [f.file for f in report.findings] == ["src/k.cu"]


def test_a_single_file_can_be_scanned(tmp_path):
    kernel = tmp_path / "k.cu"
    kernel.write_bytes(KERNEL)
    report = scan_paths(kernel)
    assert [(f.rule_id, f.file, f.line) for f in report.findings] == [("WARP003", "k.cu", 1)]


def test_a_missing_path_is_a_clear_error(tmp_path):
    with pytest.raises(ScanError, match="cannot be read"):
        scan_paths(tmp_path / "nope")
