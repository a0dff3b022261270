"""The trace report's new figures on the bundled samples, checked against the trace JSON read
here with plain json: HTA's idle time breakdown, per-step times, top operators, and the fixes
each verdict prescribes with their evidence."""

import gzip
import json
import statistics
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest

from jobs.domain.traces import RankSummary, analyze_traces
from jobs.domain.traces.compare import compare_jobs, top_operators
from jobs.domain.traces.idle import KERNEL_WAIT_US
from jobs.domain.traces.prescriptions import facts_of, prescribe

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
WORKERS_0 = "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
WORKERS_4 = "kineto/plugin/samples/resnet50_num_workers_4/worker0.pt.trace.json.gz"
DDP = "hta/tests/data/nccl_parser_config/nccl_data.json.gz"


@cache
def _rank(sample: str) -> RankSummary:
    (rank,) = analyze_traces([TRACES / sample]).ranks
    return rank


@cache
def _events(sample: str) -> tuple[dict, ...]:
    with gzip.open(TRACES / sample) as raw:
        document = json.load(raw)
    events = document["traceEvents"] if isinstance(document, dict) else document
    return tuple(event for event in events if isinstance(event, dict))


def _steps(sample: str) -> list[dict]:
    """CPU-side ProfilerStep#N spans, in start order."""
    return sorted(
        (
            e
            for e in _events(sample)
            if str(e.get("name", "")).startswith("ProfilerStep#")
            and (e.get("args") or {}).get("stream") is None
        ),
        key=lambda e: e["ts"],
    )


def _kept_gpu_events(sample: str) -> list[tuple[float, float, float | None, str]]:
    """(start, end, launch start, name) of the GPU events HTA keeps: launched before the last
    ProfilerStep starts. Runtime calls and kernels are joined on args.correlation."""
    events = _events(sample)
    launches: dict[int, float] = {}
    gpu = []
    for event in events:
        args = event.get("args") or {}
        if "dur" not in event or "correlation" not in args:
            continue
        if args.get("stream") is None:
            correlation = args["correlation"]
            launches[correlation] = min(event["ts"], launches.get(correlation, event["ts"]))
        else:
            gpu.append(event)
    cutoff = _steps(sample)[-1]["ts"]
    kept = []
    for event in gpu:
        launch = launches.get(event["args"]["correlation"])
        if launch is not None and launch < cutoff:
            kept.append((event["ts"], event["ts"] + event["dur"], launch, event["name"]))
    return kept


def _idle_by_cause(sample: str) -> dict[str, float]:
    """HTA's rule on each gap of the merged GPU timeline, written out plainly."""
    causes = {"host": 0.0, "kernel": 0.0, "other": 0.0}
    events = sorted(_kept_gpu_events(sample), key=lambda e: (e[0], e[2]))
    busy_until = events[0][1]
    for start, end, launch, _ in events[1:]:
        if start > busy_until:
            gap = start - busy_until
            if launch > busy_until:
                causes["host"] += gap
            elif gap < KERNEL_WAIT_US:
                causes["kernel"] += gap
            else:
                causes["other"] += gap
        busy_until = max(busy_until, end)
    return causes


@pytest.mark.parametrize("sample", [WORKERS_0, WORKERS_4, DDP])
def test_the_idle_split_matches_htas_rule_applied_to_the_trace_json(sample):
    rank = _rank(sample)
    expected = _idle_by_cause(sample)
    assert rank.idle_host_wait_us == pytest.approx(expected["host"], abs=1.0)
    assert rank.idle_kernel_wait_us == pytest.approx(expected["kernel"], abs=1.0)
    assert rank.idle_other_us == pytest.approx(expected["other"], abs=1.0)
    parts = rank.idle_host_wait_us + rank.idle_kernel_wait_us + rank.idle_other_us
    assert parts == pytest.approx(rank.idle_us, abs=1.0)


def _trace_file(tmp_path: Path, events: list[dict]) -> Path:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps({"traceEvents": events}))
    return path


def _launch(correlation: int, ts: float) -> dict:
    return {
        "ph": "X",
        "cat": "cuda_runtime",
        "name": "cudaLaunchKernel",
        "ts": ts,
        "dur": 1,
        "args": {"correlation": correlation},
    }


def _kernel(correlation: int, ts: float, dur: float) -> dict:
    return {
        "ph": "X",
        "cat": "kernel",
        "name": f"k{correlation}",
        "ts": ts,
        "dur": dur,
        "args": {"stream": 7, "correlation": correlation, "device": 0},
    }


def test_each_gap_goes_to_host_wait_kernel_wait_or_other(tmp_path):
    events = [
        _launch(1, 0),
        _kernel(1, 0, 10),
        _launch(2, 5),  # queued before k1 ended; 2 us gap: kernel wait
        _kernel(2, 12, 8),
        _launch(3, 50),  # launched after k2 ended at 20: the 40 us gap is host wait
        _kernel(3, 60, 10),
        _launch(4, 55),  # queued before k3 ended at 70, yet 30 us late: other
        _kernel(4, 100, 5),
    ]
    (rank,) = analyze_traces([_trace_file(tmp_path, events)]).ranks
    assert (rank.idle_host_wait_us, rank.idle_kernel_wait_us, rank.idle_other_us) == (
        40.0,
        2.0,
        30.0,
    )
    assert rank.idle_us == 72.0


def test_step_times_come_from_the_profiler_step_spans_without_the_dropped_last_step():
    rank = _rank(WORKERS_0)
    steps = _steps(WORKERS_0)[:-1]  # HTA's convention: the last step is dropped
    durations = [step["dur"] for step in steps]
    assert rank.last_step_dropped
    assert rank.step_count == len(durations) == 5
    assert rank.step_mean_us == pytest.approx(statistics.fmean(durations))
    assert rank.step_stdev_us == pytest.approx(statistics.stdev(durations))
    slowest = max(steps, key=lambda step: step["dur"])
    assert (rank.step_slowest_name, rank.step_slowest_us) == (slowest["name"], slowest["dur"])


def test_top_operators_sum_each_kernels_time_and_share_of_gpu_time():
    rank = _rank(WORKERS_0)
    totals: dict[str, float] = {}
    for start, end, _, name in _kept_gpu_events(WORKERS_0):
        totals[name] = totals.get(name, 0.0) + end - start
    gpu_time = sum(totals.values())
    expected = sorted(totals.items(), key=lambda item: (-item[1], item[0]))[:10]
    operators = top_operators(rank)
    assert [op.name for op in operators] == [name for name, _ in expected]
    assert [op.total_us for op in operators] == pytest.approx([total for _, total in expected])
    for operator in operators:
        assert operator.share_pct == pytest.approx(100 * totals[operator.name] / gpu_time)


def test_data_loading_on_the_main_thread_is_the_first_fix_with_its_evidence():
    rank = _rank(WORKERS_0)
    fetches = [
        e["dur"]
        for e in _events(WORKERS_0)
        if str(e.get("name")).startswith("enumerate(DataLoader)")
    ]
    facts = facts_of([rank])
    assert facts.main_thread_loading
    assert facts.fetch_mean_us == pytest.approx(statistics.fmean(fetches))
    prescription = prescribe([rank], "host/launch-bound")
    first = prescription.first
    assert first.key == "dataloader"
    assert any("num_workers" in action for action in first.actions)
    assert {"pin_memory", "prefetch_factor", "persistent_workers"} <= {
        knob for action in first.actions for knob in action.replace("=", " ").split()
    }
    split = facts.idle_split
    assert f"GPU idle {rank.idle_pct:.0f}% of the step" in first.evidence
    assert f"{split.host_wait_pct:.0f}% of it waiting on the host" in first.evidence
    assert "data loading on the main thread" in first.evidence
    fetch_ms = statistics.fmean(fetches) / 1000
    assert f"{fetch_ms:.0f} ms of each {rank.step_mean_us / 1000:.0f} ms step" in first.evidence


def test_with_dataloader_workers_the_host_side_fix_is_launch_overhead_not_the_dataloader():
    rank = _rank(WORKERS_4)
    keys = [fix.key for fix in prescribe([rank], "host/launch-bound").fixes]
    assert "dataloader" not in keys
    assert "launch-overhead" in keys
    (launch,) = [
        f for f in prescribe([rank], "host/launch-bound").fixes if f.key == "launch-overhead"
    ]
    assert "the DataLoader is not it" in launch.evidence
    assert any("CUDA graphs" in action for action in launch.actions)
    assert any("torch.compile" in action for action in launch.actions)


def test_communication_bound_jobs_get_overlap_bucket_and_rank_fixes():
    rank = replace(
        _rank(DDP),
        idle_pct=5.0,
        category_time_us={
            **_rank(DDP).category_time_us,
            "communication": 0.6 * _rank(DDP).kernel_time_us,
        },
        communication_overlap_pct=10.0,
    )
    fixes = prescribe([rank], "communication-bound").fixes
    assert [fix.key for fix in fixes][:3] == ["overlap", "buckets", "fewer-ranks"]
    assert "60% of the window, 10% of it overlapped with compute: 54% exposed" in fixes[0].evidence
    assert any("bucket_cap_mb" in action for action in fixes[1].actions)
    assert "2 ranks" in fixes[2].evidence


def test_memory_bound_jobs_get_fusion_and_lower_precision():
    rank = replace(_rank(WORKERS_4), idle_pct=5.0)
    fixes = prescribe([rank], "memory-bound").fixes
    assert [fix.key for fix in fixes][:2] == ["fusion", "lower-precision"]
    assert "matrix math runs in FP32" in fixes[1].evidence
    assert any("torch.compile" in action for action in fixes[0].actions)


def test_a_log_without_kernels_gets_no_fixes():
    rank = replace(_rank(WORKERS_0), source="nvidia-smi")
    assert prescribe([rank], "mostly idle").fixes == []


def test_comparing_two_jobs_gives_both_sides_and_the_difference():
    before, after = _rank(WORKERS_0), _rank(WORKERS_4)
    comparison = compare_jobs([before], [after])
    rows = {row.label: row for row in comparison.metrics}
    step = rows["Step time (mean)"]
    assert step.before == pytest.approx(before.step_mean_us / 1000)
    assert step.after == pytest.approx(after.step_mean_us / 1000)
    assert step.change == pytest.approx((after.step_mean_us - before.step_mean_us) / 1000)
    assert rows["GPU idle"].change == pytest.approx(after.idle_pct - before.idle_pct)
    assert comparison.per_step
    top = comparison.kernels[0]
    assert top.before_ms == pytest.approx(before.top_kernels[0].total_us / 1000 / 5)
    assert len(comparison.kernels) == 10
