"""Uploads that are broken, mislabelled or built to hurt: each is a TraceError, quickly.

Every file is generated in tmp_path; the only sample read is one real trace to truncate.
"""

import gzip
import sqlite3
import tarfile
import zipfile
from pathlib import Path

import pytest

from jobs.domain.traces import TraceError, analyze_traces
from tests.helpers import trace_refused_within

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
REAL_TRACE = TRACES / "hta/tests/data/nccl_parser_config/nccl_data.json.gz"
SMALL_TRACE = TRACES / "hta/tests/data/triton_example/triton_example.json.gz"
MIB = 1 << 20
SECONDS = 10.0  # "within seconds": generous for a slow CI machine


def _refused(path: Path, match: str, **options) -> TraceError:
    return trace_refused_within(path, match, SECONDS, **options)


def _gzip_bomb(path: Path, prefix: bytes, filler: bytes, total_bytes: int) -> Path:
    """`total_bytes` of `filler` gzipped in ~3 MB: one 64 MiB gzip member, written again and
    again (a gzip file may hold many members; readers decompress them all in turn)."""
    block = gzip.compress(filler * (64 * MIB // len(filler)), compresslevel=9)
    with path.open("wb") as out:
        out.write(gzip.compress(prefix))
        for _ in range(total_bytes // (64 * MIB)):
            out.write(block)
    return path


def test_a_gzip_bomb_of_json_whitespace_stops_at_the_decompressed_size_cap(tmp_path):
    bomb = _gzip_bomb(tmp_path / "trace.json.gz", b'{"traceEvents": [', b" ", 3 << 30)
    assert bomb.stat().st_size < 8 * MIB
    error = _refused(bomb, "decompressed size exceeds 256 MiB", max_decompressed_bytes=256 * MIB)
    assert str(error).startswith("trace.json.gz: ")


def test_a_gzip_bomb_of_zeros_is_refused_after_a_peek(tmp_path):
    bomb = _gzip_bomb(tmp_path / "zeros.json.gz", b"\0", b"\0", 3 << 30)
    _refused(bomb, "binary data of an unknown kind", max_decompressed_bytes=256 * MIB)


def test_the_default_cap_is_2_gib(tmp_path):
    bomb = _gzip_bomb(tmp_path / "big.json.gz", b'{"traceEvents": [', b" ", 64 * MIB)
    _refused(bomb, "exceeds 32 MiB", max_decompressed_bytes=32 * MIB)
    assert analyze_traces.__kwdefaults__["max_decompressed_bytes"] == 2 * 2**30


def test_a_truncated_gzip_is_a_clear_error_not_eoferror(tmp_path):
    data = REAL_TRACE.read_bytes()
    cut = tmp_path / "rank0.json.gz"
    cut.write_bytes(data[: len(data) // 2])
    _refused(cut, "truncated gzip stream")


def test_a_corrupt_gzip_is_a_clear_error(tmp_path):
    data = bytearray(SMALL_TRACE.read_bytes())
    data[40:60] = b"\xff" * 20
    broken = tmp_path / "rank0.json.gz"
    broken.write_bytes(bytes(data))
    _refused(broken, "corrupt gzip data|not valid JSON")


def test_truncated_json_says_it_ends_early(tmp_path):
    cut = tmp_path / "rank0.json"
    cut.write_bytes(gzip.decompress(SMALL_TRACE.read_bytes())[:5000])
    _refused(cut, "the JSON ends early")


def test_deep_nesting_is_refused_at_64_levels(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_bytes(b'{"traceEvents": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    _refused(deep, "JSON nested deeper than 64 levels")


def test_deep_nesting_inside_an_events_args_is_refused_too(tmp_path):
    deep = tmp_path / "deep.json"
    nested = b'{"a": ' * 100 + b"1" + b"}" * 100
    deep.write_bytes(b'{"traceEvents": [{"ph": "X", "args": ' + nested + b"}]}")
    _refused(deep, "nested deeper than 64 levels")


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (b'{"hello": [1, 2, 3]}', "JSON but not a trace: no traceEvents"),
        (b'{"traceEvents": {"ph": "X"}}', "traceEvents is not a list"),
        (b'{"traceEvents": 5}', "traceEvents is not a list"),
        (b"[[1, 2], [3, 4]]", "JSON but not a trace: a list of 2 values"),
        (b'{"schema": "1.0.1", "nodes": []}', "PyTorch Execution Trace"),
        (b'{"traceEvents": [{"ph": "X",]}', "not valid JSON"),
        (b'{"traceEvents": [{"name": "\xff\xfe"}]}', "not valid JSON"),
        (b'{"traceEvents": []} trailing', "not valid JSON"),
    ],
    ids=[
        "no-traceEvents",
        "events-object",
        "events-number",
        "list-of-lists",
        "et",
        "syntax",
        "bad-utf8",
        "trailing",
    ],
)
def test_json_that_is_not_a_trace_says_so(tmp_path, content, match):
    path = tmp_path / "upload.json"
    path.write_bytes(content)
    _refused(path, match)


def test_a_trace_with_events_but_no_gpu_work_is_the_no_gpu_events_error(tmp_path):
    path = tmp_path / "cpu.json"
    path.write_bytes(
        b'{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::add",'
        b' "ts": 1, "dur": 2, "pid": 1, "tid": 1}]}'
    )
    _refused(path, "no GPU events found: was the profiler run with CUDA activities?")


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (b"\x89PNG\r\n\x1a\n" + bytes(200), "this is a PNG image, not a trace"),
        (b"\xff\xd8\xff\xe0" + bytes(200), "JPEG image"),
        (b"%PDF-1.7\n" + bytes(200), "PDF document"),
        (b"\x7fELF\x02\x01\x01" + bytes(200), "ELF executable"),
        (b"", "the file is empty"),
        (b"BZh91AY&SY" + bytes(50), "bzip2"),
        (
            b"timestamp, name, index, utilization.gpu [%]\n2024/01/01 00:00:00.000, A100, 0, 5 %\n",
            "plain text, not a JSON trace",
        ),
        (bytes(range(256)) * 2, "binary data of an unknown kind"),
    ],
    ids=["png", "jpeg", "pdf", "elf", "empty", "bzip2", "csv", "binary"],
)
def test_common_non_trace_files_are_named(tmp_path, content, match):
    path = tmp_path / "trace.json"  # the name says trace; the content does not
    path.write_bytes(content)
    _refused(path, match)


def test_an_sqlite_database_is_named_as_an_nsight_export(tmp_path):
    path = tmp_path / "report.json"
    with sqlite3.connect(path) as database:
        database.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER)")
    _refused(path, "an SQLite database: Nsight Systems exports are not supported yet")


def test_a_tarball_is_named(tmp_path):
    path = tmp_path / "traces.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        archive.add(SMALL_TRACE, arcname="rank0.json.gz")
    _refused(path, "tar archive")


def test_a_missing_file_is_a_trace_error(tmp_path):
    _refused(tmp_path / "gone.json", "cannot be read")


def test_no_files_at_all_is_a_trace_error():
    with pytest.raises(TraceError, match="no files"):
        analyze_traces([])


# --- zip archives ----------------------------------------------------------------------------


def test_a_zip_member_over_the_cap_is_refused(tmp_path):
    path = tmp_path / "ranks.zip"
    with (
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive,
        archive.open("rank0.json", "w") as member,
    ):
        member.write(b'{"traceEvents": [')
        for _ in range(40):
            member.write(b" " * MIB)
    _refused(
        path,
        "ranks.zip/rank0.json: decompressed size exceeds 32 MiB",
        max_decompressed_bytes=32 * MIB,
    )


def test_a_zip_member_that_lies_about_its_size_is_caught(tmp_path):
    path = tmp_path / "ranks.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("rank0.json", b'{"traceEvents": [' + b" " * (40 * MIB) + b"]}")
    data = bytearray(path.read_bytes())
    # Rewrite the declared uncompressed size (local header and central directory) to 1 KiB.
    real_size = (40 * MIB + 19).to_bytes(4, "little")
    assert data.count(real_size) == 2
    path.write_bytes(bytes(data).replace(real_size, (1024).to_bytes(4, "little")))
    # zipfile stops at the declared size and then fails the CRC; either way nothing big is read.
    _refused(path, "corrupt zip data|exceeds 32 MiB", max_decompressed_bytes=32 * MIB)


def test_a_zip_with_too_many_members_is_refused(tmp_path):
    path = tmp_path / "many.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for index in range(300):
            archive.writestr(f"rank{index}.json", b"{}")
    _refused(path, "300 files in the zip; at most 256")


def test_an_empty_zip_is_refused(tmp_path):
    path = tmp_path / "empty.zip"
    with zipfile.ZipFile(path, "w"):
        pass
    _refused(path, "holds no files")


def test_a_zip_of_only_non_traces_is_refused(tmp_path):
    path = tmp_path / "pictures.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("timeline.png", b"\x89PNG\r\n\x1a\n" + bytes(100))
    _refused(path, "holds no trace files")


def test_a_truncated_zip_is_refused(tmp_path):
    path = tmp_path / "ranks.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.write(SMALL_TRACE, "rank0.json.gz")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    _refused(path, "damaged or truncated zip archive")


def test_an_encrypted_zip_member_is_refused(tmp_path):
    path = tmp_path / "secret.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("rank0.json", b'{"traceEvents": []}')
    data = bytearray(path.read_bytes())
    # Set the "encrypted" flag bit in the local header and the central directory entry.
    for signature, flag_offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.index(signature) + flag_offset
        data[at] |= 0x01
    path.write_bytes(bytes(data))
    _refused(path, "cannot be opened|damaged")
