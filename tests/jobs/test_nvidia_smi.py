"""nvidia-smi --query-gpu CSV logs, with and without units, GPUs interleaved, values missing.

The fixtures (tests/fixtures/traces/nvidia-smi/, written for these tests) hold round numbers, so
every expectation below is worked out by hand in its comment.
"""

import gzip
import time
import zipfile
from pathlib import Path

import pytest

from jobs.domain.traces import TraceError, analyze_traces

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
LOGS = TRACES / "nvidia-smi"
UNITS = LOGS / "query_gpu_units_2gpus.csv"
NOUNITS = LOGS / "query_gpu_nounits_3gpus_reordered.csv"
RESTARTED = LOGS / "query_gpu_quoted_header_restarted.csv"
KINETO = TRACES / "hta/tests/data/triton_example/triton_example.json.gz"
MIB = 2**20
HEADER = (
    "timestamp, name, index, utilization.gpu [%], utilization.memory [%], memory.used [MiB], "
    "memory.total [MiB], power.draw [W]\n"
)


def test_units_log_two_interleaved_gpus():
    summary = analyze_traces([UNITS])
    assert summary.warnings == []
    busy, idle = summary.ranks
    for gpu in (busy, idle):
        assert gpu.source == "nvidia-smi"
        assert gpu.gpu_name == "NVIDIA A100-SXM4-80GB"
        assert gpu.device_properties["totalGlobalMem"] == 81920 * MIB
        assert (gpu.samples, gpu.duration_s) == (20, 20.0)  # 19 one-second gaps + one period
    assert (busy.rank, idle.rank) == (0, 1)
    # GPU 0: 96 % throughout except one [N/A], which is left out rather than read as 0.
    assert busy.utilization_mean_pct == pytest.approx(96.0)
    assert busy.idle_pct == pytest.approx(4.0)
    assert busy.compute_us == pytest.approx(0.96 * 20e6)
    assert busy.peak_memory_used_bytes == 62000 * MIB  # one sample above the steady 61440
    assert busy.memory_utilization_mean_pct == pytest.approx(71.0)
    assert len(busy.utilization_series) == 19
    # GPU 1: 0 % for 15 s then 40 % for 5 s: mean 200/20 = 10 %, 95th percentile 40 %,
    # 15 s (75 %) below 10 %. utilization.memory is [Not Supported], power [N/A] every 4th.
    assert idle.utilization_mean_pct == pytest.approx(10.0)
    assert idle.utilization_p95_pct == 40.0
    assert (idle.low_utilization_s, idle.low_utilization_pct) == (15.0, 75.0)
    assert idle.memory_utilization_mean_pct is None
    assert idle.power_mean_w == pytest.approx(61.25)
    assert idle.peak_memory_used_bytes == 3686 * MIB
    assert idle.utilization_series[0] == (0.0, 0.0)
    assert idle.utilization_series[-1] == (19.0, 40.0)
    assert idle.memory_series[0] == (0.0, 3686 * MIB)


def test_nounits_log_with_columns_reordered_and_three_gpus():
    gpus = analyze_traces([NOUNITS]).ranks
    assert [gpu.rank for gpu in gpus] == [0, 1, 2]
    assert {gpu.gpu_name for gpu in gpus} == {"NVIDIA L4"}
    assert {gpu.device_properties["totalGlobalMem"] for gpu in gpus} == {23034 * MIB}
    # -l 2: ten samples 2 s apart cover 20 s.
    assert [(gpu.samples, gpu.duration_s) for gpu in gpus] == [(10, 20.0)] * 3
    assert [gpu.utilization_mean_pct for gpu in gpus] == [80.0, 20.0, 5.0]
    assert [gpu.memory_utilization_mean_pct for gpu in gpus] == [60.0, 10.0, 1.0]
    assert gpus[0].peak_memory_used_bytes == (20000 + 90) * MIB  # memory.used grows 10 MiB/sample
    assert gpus[0].power_mean_w == pytest.approx(70.12)
    assert len(gpus[1].utilization_series) == 9  # the [N/A] sample has no point
    assert gpus[2].power_mean_w is None  # [N/A] throughout
    assert gpus[2].low_utilization_pct == 100.0


def test_quoted_header_a_restart_and_a_cut_row():
    summary = analyze_traces([RESTARTED])
    (gpu,) = summary.ranks
    assert summary.warnings == [f"{RESTARTED.name}: 1 rows skipped: not readable as samples"]
    assert (gpu.gpu_name, gpu.device_properties["totalGlobalMem"]) == ("Tesla T4", 15360 * MIB)
    # Samples at 0..5 s and 600..603 s: the 595 s gap counts as 10 periods of 1 s, so the
    # ten samples weigh 1,1,1,1,1,10,1,1,1,1 = 19 s.
    assert (gpu.samples, gpu.duration_s) == (10, 19.0)
    # 5 + 50 + 100 + 100 (%·s) over 19 s; below 10 %: 0,0,5 (3 s), the 0 before the gap (10 s),
    # and 0,0,0 after (3 s) = 16 s.
    assert gpu.utilization_mean_pct == pytest.approx(255 / 19)
    assert gpu.low_utilization_s == 16.0
    assert gpu.low_utilization_pct == pytest.approx(100 * 16 / 19)
    assert gpu.utilization_p95_pct == 100.0
    assert gpu.peak_memory_used_bytes == 2000 * MIB
    # Power is [Unknown Error] after the restart; before it, 27.5..32.5 W weighted as above.
    assert gpu.power_mean_w == pytest.approx((27.5 + 28.5 + 29.5 + 30.5 + 31.5 + 10 * 32.5) / 15)


def test_gzipped_and_zipped_logs_are_read(tmp_path):
    gzipped = tmp_path / "smi.csv.gz"
    gzipped.write_bytes(gzip.compress(UNITS.read_bytes()))
    zipped = tmp_path / "logs.zip"
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.write(NOUNITS, "node1.csv")
        archive.write(RESTARTED, "node2.csv")
    ranks = analyze_traces([gzipped, zipped]).ranks
    assert sorted((rank.file, rank.rank) for rank in ranks) == [
        ("logs.zip/node1.csv", 0),
        ("logs.zip/node1.csv", 1),
        ("logs.zip/node1.csv", 2),
        ("logs.zip/node2.csv", 0),
        ("smi.csv.gz", 0),
        ("smi.csv.gz", 1),
    ]


def test_a_log_next_to_a_kineto_trace_does_not_trigger_rank_warnings():
    summary = analyze_traces([KINETO, UNITS])
    assert sorted(rank.source for rank in summary.ranks) == ["kineto", "nvidia-smi", "nvidia-smi"]
    assert not any("appears in" in warning for warning in summary.warnings)


def test_a_day_of_samples_is_charted_in_at_most_500_points(tmp_path):
    path = tmp_path / "day.csv"
    rows = [HEADER]
    for second in range(3600):
        minute, sec = divmod(second, 60)
        used = 9000 if second == 1234 else 1000
        rows.append(
            f"2024/05/14 10:{minute:02d}:{sec:02d}.000, NVIDIA L4, 0, {second % 100} %, 0 %, "
            f"{used} MiB, 23034 MiB, 30.00 W\n"
        )
    path.write_text("".join(rows))
    (gpu,) = analyze_traces([path]).ranks
    assert gpu.samples == 3600
    assert len(gpu.utilization_series) <= 500
    assert len(gpu.memory_series) <= 500
    assert max(used for _, used in gpu.memory_series) == 9000 * MIB  # peaks survive
    assert gpu.utilization_mean_pct == pytest.approx(49.5)


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (HEADER, "no readable samples"),
        ("utilization.gpu [%], memory.used [MiB]\n5 %, 100 MiB\n", "without timestamp"),
        (HEADER + "x" * (1 << 20), "a line longer than"),
        (HEADER + "garbage\n1, 2, 3\n", "no readable samples"),
    ],
    ids=["header-only", "no-timestamp", "endless-line", "garbage"],
)
def test_logs_that_cannot_be_read_are_named(tmp_path, content, match):
    path = tmp_path / "smi.csv"
    path.write_text(content)
    started = time.monotonic()
    with pytest.raises(TraceError, match=f"smi.csv: .*{match}"):
        analyze_traces([path])
    assert time.monotonic() - started < 5


def test_a_csv_without_the_utilisation_columns_is_still_plain_text(tmp_path):
    path = tmp_path / "smi.csv"
    path.write_text("timestamp, name, index, temperature.gpu\n2024/05/14 10:00:00.000, T4, 0, 40\n")
    with pytest.raises(TraceError, match="plain text, not a JSON trace"):
        analyze_traces([path])
