"""p95 prompt and answer lengths: the objectives are held for a request of those lengths in the
queue of mean ones, so a longer tail never needs fewer GPUs, a tail equal to the mean changes
nothing, and a p95 below its mean is refused."""

import dataclasses

import pytest

from advisor.domain.planning.capacity import Load, Objectives, plan_capacity
from advisor.domain.planning.remedies import what_would_meet
from advisor.domain.sizing.bundled_models import bundled_models
from advisor.domain.sizing.workload import Workload
from tests.advisor.test_capacity_plan import DEVICES, OFFERS

URL = "/api/v1/advice/capacity"
BASE = Load(20, prompt_tokens=2000, output_tokens=300)


def _plan(load: Load, **objectives):
    workload = Workload(bundled_models()["llama-3.1-8b"].architecture())
    return plan_capacity(
        workload, load, Objectives(**(objectives or {"ttft_p95_ms": 500})), DEVICES, OFFERS
    )


def _gpus(plan) -> dict[tuple[str, int], int]:
    return {(p.candidate.device.key, p.candidate.gpu_count): p.gpus_total for p in plan.meeting}


def test_a_tail_equal_to_the_mean_changes_nothing():
    same = dataclasses.replace(BASE, prompt_tokens_p95=2000, output_tokens_p95=300)
    assert _gpus(_plan(same)) == _gpus(_plan(BASE))
    assert _plan(same).plan.ttft_p95_ms == _plan(BASE).plan.ttft_p95_ms


def test_a_longer_prompt_tail_is_later_and_never_needs_fewer_gpus():
    base, tail = _plan(BASE), _plan(dataclasses.replace(BASE, prompt_tokens_p95=6000))
    assert tail.plan.ttft_p95_ms[1] > base.plan.ttft_p95_ms[1]
    base_gpus, tail_gpus = _gpus(base), _gpus(tail)
    assert set(tail_gpus) <= set(base_gpus)  # what meets with the tail met without it
    for key, gpus in tail_gpus.items():
        assert gpus >= base_gpus[key]


def test_a_longer_answer_tail_lengthens_the_end_to_end_time_by_its_extra_tokens():
    objectives = {"ttft_p95_ms": 500, "e2e_p95_ms": 60_000}
    base = _plan(BASE, **objectives).plan
    tail = _plan(dataclasses.replace(BASE, output_tokens_p95=900), **objectives)
    same = next(
        p
        for p in tail.meeting
        if (p.candidate.device.key, p.candidate.gpu_count, p.replicas)
        == (base.candidate.device.key, base.candidate.gpu_count, base.replicas)
    )
    # 600 more tokens at about the mean inter-token time: at least 600 of the fastest ITL.
    extra_ms = same.e2e_p95_ms[1] - base.e2e_p95_ms[1]
    assert extra_ms > 600 * 0.5 * base.itl_p95_ms[1] * 0.5
    assert same.ttft_p95_ms == base.ttft_p95_ms


def test_what_would_meet_shortens_the_p95_prompt_when_the_load_gives_one():
    load = dataclasses.replace(BASE, prompt_tokens_p95=100_000)
    plan = _plan(load, ttft_p95_ms=300)
    changes = {change.field: change for change in what_would_meet(plan)}
    assert "prompt_tokens_p95" in changes and "prompt_tokens" not in changes
    assert changes["prompt_tokens_p95"].value < 100_000
    assert changes["prompt_tokens_p95"].sentence.startswith("p95 prompts of at most")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"prompt_tokens_p95": 1999}, "prompt_tokens_p95"),
        ({"output_tokens_p95": 299}, "output_tokens_p95"),
        ({"prompt_tokens_p95": 0}, "prompt_tokens_p95"),
        # GPT-2's 1,024 learned positions hold the mean request, not the p95 one.
        (
            {
                "model": "gpt2",
                "prompt_tokens": 500,
                "output_tokens": 100,
                "prompt_tokens_p95": 1000,
            },
            "prompt_tokens_p95",
        ),
    ],
)
def test_a_p95_below_its_mean_or_past_the_model_is_a_400_naming_it(api, change, field):
    request = {
        "model": "llama-3.1-8b",
        "requests_per_second": 20,
        "prompt_tokens": 2000,
        "output_tokens": 300,
        "ttft_p95_ms": 500,
    }
    response = api.post(URL, request | change, format="json")
    assert response.status_code == 400
    assert field in response.json(), response.json()


def test_the_answer_states_the_tail_and_the_assumption(api):
    request = {
        "model": "llama-3.1-8b",
        "requests_per_second": 20,
        "prompt_tokens": 2000,
        "prompt_tokens_p95": 6000,
        "output_tokens": 300,
        "ttft_p95_ms": 500,
        "max_candidates": 2,
    }
    body = api.post(URL, request, format="json").json()
    assert body["load"]["prompt_tokens_p95"] == 6000
    assert any("p95 lengths" in line for line in body["assumptions"])
