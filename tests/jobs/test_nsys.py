"""Nsight Systems SQLite exports: the real sample, older layouts, and databases built to hurt.

Expected values for the sample are read from the file with plain SQL here, independently of
the analyser; hostile databases are built in tmp_path.
"""

import gzip
import sqlite3
import time
import zipfile
from pathlib import Path

import pytest

from jobs.domain.traces import TraceError, analyze_traces
from jobs.domain.traces.nsys.sqlite_guard import ReadOnlyDatabase
from tests.helpers import trace_refused_within

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
SAMPLE = TRACES / "pipit/pipit/tests/data/saxpy-mpi-cuda_nsys_perlmutter0.sqlite"
KINETO = TRACES / "hta/tests/data/triton_example/triton_example.json.gz"
SECONDS = 5.0
ENDLESS = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r"


def _sample_sql(query: str) -> tuple:
    with sqlite3.connect(f"file:{SAMPLE}?mode=ro&immutable=1", uri=True) as db:
        return db.execute(query).fetchone()


def _refused(path: Path, match: str, **options) -> TraceError:
    return trace_refused_within(path, match, SECONDS, **options)


# --- the real export ---------------------------------------------------------------------------


def test_the_pipit_sample_is_one_a100_with_its_kernels_and_copies():
    summary = analyze_traces([SAMPLE])
    (rank,) = summary.ranks
    assert summary.files == [SAMPLE.name]
    assert summary.warnings == []
    assert (rank.source, rank.rank, rank.file) == ("nsys", 0, SAMPLE.name)
    assert rank.gpu_name == "NVIDIA A100-SXM4-40GB"
    assert rank.device_properties["totalGlobalMem"] == 42_297_524_224  # TARGET_INFO_GPU
    assert (rank.device_properties["computeMajor"], rank.device_properties["numSms"]) == (8, 108)
    kernels = {k.name: k for k in rank.top_kernels}
    saxpy = kernels["saxpy(double *, double *, double *, double, int)"]  # the demangled name
    assert (saxpy.category, saxpy.count) == ("computation", 5)
    assert kernels["Memcpy HtoD (Pageable -> Device)"].count == 10
    assert kernels["Memcpy DtoH (Device -> Pageable)"].count == 5
    assert rank.gpu_event_count == 5 + 15
    assert rank.memcpy_bytes_by_kind == {"HtoD": 10 * 262_144_000, "DtoH": 5 * 262_144_000}


def test_the_sample_breakdown_matches_plain_sql():
    (rank,) = analyze_traces([SAMPLE]).ranks
    first_ns, last_ns = _sample_sql(
        "SELECT min(start), max(end) FROM (SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL "
        "UNION ALL SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY)"
    )
    (kernel_ns,) = _sample_sql("SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL")
    (copy_ns,) = _sample_sql("SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_MEMCPY")
    assert rank.window_start_us == pytest.approx(first_ns / 1000)
    assert rank.kernel_time_us == pytest.approx((last_ns - first_ns) / 1000)
    # The sample's work is serial on one stream: no overlap, so unions are plain sums.
    assert rank.compute_us == pytest.approx(kernel_ns / 1000)
    assert rank.non_compute_us == pytest.approx(copy_ns / 1000)
    assert rank.idle_us == pytest.approx((last_ns - first_ns - kernel_ns - copy_ns) / 1000)
    assert rank.idle_pct + rank.compute_pct + rank.non_compute_pct == pytest.approx(100)
    assert sum(rank.memcpy_us_by_kind.values()) == pytest.approx(copy_ns / 1000)


def test_an_export_inside_a_zip_is_skipped_with_a_warning(tmp_path):
    upload = tmp_path / "upload.zip"
    with zipfile.ZipFile(upload, "w") as archive:
        archive.write(SAMPLE, "report.sqlite")
        archive.write(KINETO, "rank0.json.gz")
    summary = analyze_traces([upload])
    assert [rank.source for rank in summary.ranks] == ["kineto"]
    assert any("report.sqlite: skipped" in warning for warning in summary.warnings)


def test_a_kineto_trace_and_an_export_in_one_upload():
    summary = analyze_traces([KINETO, SAMPLE])
    assert sorted(rank.source for rank in summary.ranks) == ["kineto", "nsys"]
    assert summary.files == [KINETO.name, SAMPLE.name]


# --- layouts -----------------------------------------------------------------------------------


def _build(path: Path, *statements: str) -> Path:
    with sqlite3.connect(path) as db:
        for statement in statements:
            db.execute(statement)
    db.close()
    return path


_STRINGS = (
    "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)",
    "INSERT INTO StringIds VALUES (1, 'ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn'), "
    "(2, 'ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm *, unsigned long, ncclWork *)')",
)


def test_an_older_layout_two_gpus_short_names_and_no_memory_kinds(tmp_path):
    """Before TARGET_INFO_GPU, GPUs were listed in TARGET_INFO_CUDA_GPU keyed by deviceId;
    copies had no srcKind/dstKind. Each device becomes a rank."""
    path = _build(
        tmp_path / "old.sqlite",
        *_STRINGS,
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, end INT, deviceId INT, "
        "streamId INT, shortName INT)",
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 5000, 0, 7, 1), "
        "(6000, 8000, 0, 7, 2), (2000, 3000, 1, 7, 1)",
        "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INT, end INT, deviceId INT, "
        "streamId INT, bytes INT, copyKind INT)",
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (9000, 10000, 0, 7, 4096, 8)",
        "CREATE TABLE TARGET_INFO_CUDA_GPU (deviceId INT, name TEXT, totalMemory INT, "
        "computeCapabilityMajor INT, numMultiprocessors INT)",
        "INSERT INTO TARGET_INFO_CUDA_GPU VALUES (0, 'NVIDIA H100 80GB HBM3', 85520809984, 9, "
        "132), (1, 'NVIDIA H100 80GB HBM3', 85520809984, 9, 132)",
    )
    gpu0, gpu1 = analyze_traces([path]).ranks
    assert (gpu0.rank, gpu1.rank) == (0, 1)
    assert gpu0.gpu_name == "NVIDIA H100 80GB HBM3"
    assert gpu0.device_properties == {
        "id": 0,
        "name": "NVIDIA H100 80GB HBM3",
        "totalGlobalMem": 85520809984,
        "computeMajor": 9,
        "numSms": 132,
    }
    assert gpu0.kernel_time_us == pytest.approx(9.0)  # 1000 ns to 10000 ns
    assert gpu0.category_time_us["communication"] == pytest.approx(2.0)
    assert gpu0.memcpy_bytes_by_kind == {"DtoD": 4096}
    assert gpu0.math_us == pytest.approx(4.0)
    assert gpu0.math_time_by_precision_us == {"bf16": pytest.approx(4.0)}
    assert gpu1.gpu_event_count == 1


def test_an_export_without_gpu_identity_still_reads_with_a_warning(tmp_path):
    path = _build(
        tmp_path / "noinfo.sqlite",
        "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INT, end INT, deviceId INT, "
        "streamId INT, bytes INT)",
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (0, 10, 3, 1, 64)",
    )
    summary = analyze_traces([path])
    (rank,) = summary.ranks
    assert (rank.rank, rank.gpu_name, rank.top_kernels[0].name) == (3, None, "Memset (Device)")
    assert any("names no GPU" in warning for warning in summary.warnings)


@pytest.mark.parametrize(
    ("statements", "match"),
    [
        (("CREATE TABLE users (id INTEGER)",), "not an Nsight Systems export"),
        (_STRINGS, "no CUDA kernels or memory copies"),
        (
            (
                "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INT, end INT, deviceId INT, "
                "streamId INT, bytes INT)",
            ),
            "no CUDA kernels or memory copies",
        ),
        (
            (
                "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, end INT, deviceId INT, "
                "streamId INT, demangledName INT)",
            ),
            "not supported yet in this layout .*without a StringIds table",
        ),
    ],
    ids=["other-database", "no-activity", "empty-activity", "no-strings"],
)
def test_databases_that_are_not_readable_exports_are_named(tmp_path, statements, match):
    _refused(_build(tmp_path / "db.sqlite", *statements), match)


# --- hostile databases -------------------------------------------------------------------------


def test_a_view_posing_as_the_kernel_table_is_refused(tmp_path):
    path = _build(
        tmp_path / "view.sqlite",
        *_STRINGS,
        "CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS SELECT 1 AS start, 2 AS end, 0 AS deviceId, "
        "0 AS streamId, 1 AS demangledName",
    )
    _refused(path, "CUPTI_ACTIVITY_KIND_KERNEL is a view, not a table")


def test_an_endless_recursive_view_is_never_run(tmp_path):
    path = _build(
        tmp_path / "endless.sqlite",
        *_STRINGS,
        f"CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS SELECT n AS start, n AS end, 0 AS deviceId, "
        f"0 AS streamId, 1 AS demangledName FROM ({ENDLESS})",
    )
    _refused(path, "is a view, not a table")


def test_the_deadline_stops_an_endless_query(tmp_path):
    path = _build(tmp_path / "endless.sqlite", f"CREATE VIEW endless AS {ENDLESS}")
    started = time.monotonic()
    with (
        ReadOnlyDatabase(path, label="endless.sqlite", query_limit_ms=200) as db,
        pytest.raises(TraceError, match=r"ran past its 0\.2 s limit"),
    ):
        list(db.rows("SELECT count(*) FROM endless"))
    assert time.monotonic() - started < SECONDS


@pytest.mark.parametrize(
    "statement",
    [
        "ATTACH DATABASE ':memory:' AS other",
        "CREATE TABLE more (a INT)",
        "PRAGMA writable_schema=ON",
        "SELECT load_extension('evil')",
        "SELECT readfile('/etc/passwd')",
        "SELECT abs(-1)",
    ],
)
def test_the_guard_allows_reading_and_nothing_else(tmp_path, statement):
    path = _build(tmp_path / "db.sqlite", "CREATE TABLE t (a INT)")
    with ReadOnlyDatabase(path, label="db.sqlite", query_limit_ms=1000) as db:
        with pytest.raises(TraceError, match=r"db\.sqlite: .*(more than reading|no such)"):
            list(db.rows(statement))
        assert list(db.rows("SELECT count(*) FROM t")) == [(0,)]


def test_a_giant_value_is_refused_not_loaded(tmp_path):
    path = _build(
        tmp_path / "big.sqlite",
        *_STRINGS,
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, end INT, deviceId INT, "
        "streamId INT, demangledName INT)",
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (0, 10, 0, 7, 3)",
        "INSERT INTO StringIds VALUES (3, printf('%.*c', 20000000, 'x'))",
    )
    _refused(path, "big.sqlite: a value in the SQLite database is over 16 MiB")


def test_a_corrupt_database_is_a_clear_error(tmp_path):
    path = tmp_path / "corrupt.sqlite"
    path.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 64)
    _refused(path, "corrupt.sqlite: the SQLite database is damaged or unreadable")


def test_a_truncated_export_is_a_clear_error(tmp_path):
    path = tmp_path / "cut.sqlite"
    path.write_bytes(SAMPLE.read_bytes()[:8192])
    _refused(path, "cut.sqlite: the SQLite database is damaged or unreadable")


def test_a_wal_mode_database_with_its_wal_file_is_incomplete(tmp_path):
    path = tmp_path / "wal.sqlite"
    db = sqlite3.connect(path)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
        db.commit()
        assert path.with_name("wal.sqlite-wal").exists()
        _refused(path, "the export is incomplete: the database is in WAL mode")
    finally:
        db.close()


def test_a_wal_mode_database_alone_is_incomplete_too(tmp_path):
    path = _build(tmp_path / "wal.sqlite", "PRAGMA journal_mode=WAL", *_STRINGS)
    assert not path.with_name("wal.sqlite-wal").exists()  # checkpointed on close
    _refused(path, "the export is incomplete")


def test_bytes_that_are_not_sqlite_are_named(tmp_path):
    path = tmp_path / "report.sqlite"
    path.write_bytes(bytes(range(256)) * 8)
    _refused(path, "binary data of an unknown kind")


def test_a_gzipped_export_is_refused(tmp_path):
    path = tmp_path / "report.sqlite.gz"
    path.write_bytes(gzip.compress(SAMPLE.read_bytes()))
    _refused(path, "an SQLite database inside gzip")


def test_an_export_over_the_size_cap_is_refused(tmp_path):
    _refused(SAMPLE, "over the 1 MiB limit", max_decompressed_bytes=1 << 20)
