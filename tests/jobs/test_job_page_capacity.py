"""The job page's advised-GPU capacity line comes from the stored report: before, the page
queried the catalogue for it (`gpu_memory_gib_by_key`) on every view, so an edited catalogue
changed an old report's chart. Reports stored before candidates carried capacity_bytes get no
capacity line rather than a lookup."""

import pytest

from jobs.views import _advised

pytestmark = pytest.mark.django_db

STEP_COST = {"low": 0.5, "expected": 1.0, "high": 1.5}


def _candidate(gpu: str, expected_usd: float, **extra) -> dict:
    return {
        "gpu": gpu,
        "gpu_name": gpu,
        "is_current": False,
        "fits": True,
        "usd_per_1000_steps": {**STEP_COST, "expected": expected_usd},
        **extra,
    }


def test_the_advised_capacity_is_the_stored_one_with_no_query(django_assert_num_queries):
    report = {
        "candidates": [
            {**_candidate("H100-SXM", 9.0), "is_current": True},
            _candidate("L4", 2.0, capacity_bytes=24 * 2**30),
            _candidate("A10", 3.0, capacity_bytes=24 * 2**30),
        ]
    }
    with django_assert_num_queries(0):
        advised = _advised(report)
    assert advised["gpu"] == "L4" and advised["capacity_bytes"] == 24 * 2**30


def test_an_old_report_without_stored_capacity_gets_no_capacity_line(django_assert_num_queries):
    report = {"candidates": [_candidate("L4", 2.0)]}
    with django_assert_num_queries(0):
        assert _advised(report) is None


def test_the_current_gpu_on_a_smaller_instance_is_not_drawn_as_the_advised_one():
    # A 4-GPU machine with 3 idle: its GPU on a 1-GPU instance is cheapest, but its capacity
    # line is the current one's; the advised line is the cheapest other GPU.
    report = {
        "candidates": [
            {**_candidate("A100-40GB-SXM", 9.0, gpu_count=4), "is_current": True},
            _candidate("A100-40GB-SXM", 2.0, gpu_count=1, capacity_bytes=40 * 2**30),
            _candidate("L4", 3.0, gpu_count=1, capacity_bytes=24 * 2**30),
        ]
    }
    assert _advised(report)["gpu"] == "L4"
