"""Capacity plans (advisor/domain/planning/capacity.py) over catalogue GPUs and made-up
offers: more load or a tighter objective never needs fewer GPUs, replicas follow the rate,
the bill is replicas x GPUs x price x 730, and objectives nothing meets say what would."""

import dataclasses
import math

import pytest

from advisor.domain.devices import Offer
from advisor.domain.planning.assumptions import HOURS_PER_MONTH, SPOT_SPARE_REPLICA_FRACTION
from advisor.domain.planning.capacity import Load, Objectives, plan_capacity
from advisor.domain.planning.remedies import what_would_meet
from advisor.domain.sizing.bundled_models import bundled_models
from advisor.domain.sizing.rental import ANY_PRICING, SPOT, Rental
from advisor.domain.sizing.workload import Workload
from tests.advisor.devices import GPUS, offer

DEVICES = [GPUS[key] for key in ("H100-SXM", "A100-80GB-SXM", "L40S", "L4")]
ON_DEMAND_USD_PER_GPU_HOUR = {"H100-SXM": 4.0, "A100-80GB-SXM": 2.0, "L40S": 1.2, "L4": 0.7}
SPOT_SHARE = 0.4


def _offers() -> dict[str, list[Offer]]:
    offers = {}
    for key, price in ON_DEMAND_USD_PER_GPU_HOUR.items():
        rows = [offer("cloud", f"{key}-{count}", count, price * count) for count in (1, 2, 4, 8)]
        spot = [
            dataclasses.replace(row, pricing_model=SPOT, usd_per_hour=row.usd_per_hour * SPOT_SHARE)
            for row in rows
        ]
        offers[key] = rows + spot
    return offers


OFFERS = _offers()


def _plan(rate: float = 40, prompt: int = 2000, output: int = 300, **objectives):
    workload = Workload(bundled_models()["llama-3.1-8b"].architecture())
    objectives = objectives or {"ttft_p95_ms": 500}
    load = Load(
        rate, prompt_tokens=prompt, output_tokens=output, average_requests_per_second=rate / 2
    )
    return plan_capacity(workload, load, Objectives(**objectives), DEVICES, OFFERS)


def _meeting(plan) -> dict[tuple[str, int], object]:
    return {(p.candidate.device.key, p.candidate.gpu_count): p for p in plan.meeting}


def test_the_plan_is_the_cheapest_that_meets_the_objectives():
    plan = _plan()
    assert plan.plan is not None and plan.plan.meets
    bills = [p.usd_per_month_ranked for p in plan.meeting if p.usd_per_month_ranked]
    assert plan.plan.usd_per_month_ranked == min(bills)
    assert bills == sorted(bills)
    # At the peak spread over its replicas, the plan meets the objective at expected speed.
    assert plan.plan.ttft_p95_ms[1] <= 500


def test_more_load_never_needs_fewer_gpus():
    lighter, heavier = _meeting(_plan(rate=10)), _meeting(_plan(rate=40))
    assert set(heavier) == set(lighter)
    for key, plan in heavier.items():
        assert plan.gpus_total >= lighter[key].gpus_total, key


def test_a_tighter_objective_never_needs_fewer_gpus():
    loose, tight = _meeting(_plan(ttft_p95_ms=800)), _meeting(_plan(ttft_p95_ms=250))
    assert set(tight) <= set(loose) and tight
    for key, plan in tight.items():
        assert plan.gpus_total >= loose[key].gpus_total, key
        assert (
            plan.max_requests_per_second_per_replica
            <= loose[key].max_requests_per_second_per_replica
        )


@pytest.mark.parametrize("rate", [3, 17, 55])
def test_replicas_are_the_peak_over_what_one_replica_serves_rounded_up(rate):
    plan = _plan(rate=rate)
    for replica_plan in plan.meeting:
        per_replica = replica_plan.max_requests_per_second_per_replica
        assert replica_plan.replicas == math.ceil(rate / per_replica)
        assert replica_plan.gpus_total == replica_plan.replicas * replica_plan.candidate.gpu_count
        assert replica_plan.utilization_at_average == pytest.approx(
            (rate / 2) / (replica_plan.replicas * per_replica)
        )


def test_what_one_replica_serves_does_not_depend_on_the_peak():
    few, many = _meeting(_plan(rate=5)), _meeting(_plan(rate=50))
    for key, plan in many.items():
        assert plan.max_requests_per_second_per_replica == pytest.approx(
            few[key].max_requests_per_second_per_replica, rel=0.01
        )


def test_the_bill_is_replicas_times_gpus_times_price_times_730_hours():
    for replica_plan in _plan().meeting:
        key = replica_plan.candidate.device.key
        gpus = replica_plan.gpus_total
        price = ON_DEMAND_USD_PER_GPU_HOUR[key]
        bill = replica_plan.usd_per_month
        assert bill.on_demand == pytest.approx(gpus * price * HOURS_PER_MONTH)
        spare = max(1, math.ceil(SPOT_SPARE_REPLICA_FRACTION * replica_plan.replicas))
        assert replica_plan.spot_replicas == replica_plan.replicas + spare
        spot_gpus = replica_plan.spot_replicas * replica_plan.candidate.gpu_count
        assert bill.spot == pytest.approx(spot_gpus * price * SPOT_SHARE * HOURS_PER_MONTH)
        assert bill.reserved_1y is bill.reserved_3y is bill.scheduled is None


def test_any_pricing_ranks_on_the_cheaper_of_on_demand_and_spot():
    workload = Workload(bundled_models()["llama-3.1-8b"].architecture(), pricing_model=ANY_PRICING)
    plan = plan_capacity(
        workload, Load(20, 2000, 300), Objectives(ttft_p95_ms=500), DEVICES, OFFERS
    )
    best = plan.plan
    assert best.usd_per_month_ranked == min(best.usd_per_month.on_demand, best.usd_per_month.spot)
    assert best.offer.pricing_model == SPOT


def test_a_provider_without_offers_leaves_the_plans_unpriced():
    workload = Workload(
        bundled_models()["llama-3.1-8b"].architecture(), rental=Rental(providers=("elsewhere",))
    )
    plan = plan_capacity(
        workload, Load(20, 2000, 300), Objectives(ttft_p95_ms=500), DEVICES, OFFERS
    )
    assert plan.meeting and plan.plan is None
    assert all(p.usd_per_month.on_demand is None for p in plan.meeting)


def test_a_candidate_that_misses_says_which_objective_and_by_how_much():
    plan = _plan(ttft_p95_ms=150)
    missing = [p for p in plan.candidates if p.candidate.fits and not p.meets]
    assert missing
    for replica_plan in missing:
        assert "time to first token" in replica_plan.reason
        assert "150 ms" in replica_plan.reason


def test_an_impossible_target_says_what_would_meet_it():
    plan = _plan(ttft_p95_ms=5)
    assert not plan.meeting and plan.plan is None
    changes = {change.change: change for change in what_would_meet(plan)}
    loosest = changes["objective"]
    fastest_alone = min(p.no_load.ttft_p95_s * 1e3 for p in plan.candidates if p.no_load)
    assert loosest.field == "ttft_p95_ms"
    assert loosest.value == pytest.approx(fastest_alone, abs=0.1)
    assert changes["faster_part"].value == pytest.approx(fastest_alone / 5, rel=0.01)
    # The looser target is met.
    assert _plan(ttft_p95_ms=loosest.value + 0.1).meeting


def test_a_shorter_prompt_that_would_meet_is_named_and_meets():
    alone = _plan(prompt=6000, ttft_p95_ms=1)
    target = 0.5 * min(p.no_load.ttft_p95_s * 1e3 for p in alone.candidates if p.no_load)
    plan = _plan(prompt=6000, ttft_p95_ms=target)
    assert not plan.meeting
    shorter = next(c for c in what_would_meet(plan) if c.change == "prompt_tokens")
    assert 1 <= shorter.value < 6000
    assert _plan(prompt=int(shorter.value), ttft_p95_ms=target).meeting


def test_objectives_are_required():
    with pytest.raises(ValueError, match="at least one objective"):
        _plan(ttft_p95_ms=None)


def test_very_short_prompts_at_a_high_rate_are_planned():
    # Thousands of requests decoding at once, a budget holding hundreds of prompts: the rate
    # search passes through loads past the KV pool and must come back from them.
    plan = _plan(rate=200, prompt=50, output=300, ttft_p95_ms=500, itl_p95_ms=50)
    assert plan.plan is not None and plan.plan.meets
    assert plan.plan.replicas * plan.plan.max_requests_per_second_per_replica >= 200
