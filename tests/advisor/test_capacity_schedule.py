"""The 24-hour schedule: replicas per hour from the profile, which replica levels are worth
reserving, and the month's bill of a reserved base with on-demand hours above it; and, through
the planner, reserved bills and ranking by the cheapest way to pay."""

import dataclasses

import pytest

from advisor.domain.planning.capacity import Load, Objectives, plan_capacity
from advisor.domain.planning.schedule import replicas_by_hour, reserved_base, scheduled_bill
from advisor.domain.sizing.bundled_models import bundled_models
from advisor.domain.sizing.workload import Workload
from tests.advisor.test_capacity_plan import DEVICES, OFFERS

DAY = [2, 2, 2, 2, 2, 2, 4, 8, 12, 16, 20, 20, 20, 20, 16, 12, 12, 12, 8, 8, 4, 4, 2, 2]


def test_each_hour_gets_its_rate_over_one_replicas_rounded_up():
    assert replicas_by_hour([0.5, 4.0, 4.01, 10.0], 4.0) == [1, 1, 2, 3]


def test_a_quiet_hour_keeps_one_replica_up():
    assert replicas_by_hour([0.0] * 3, 5.0) == [1, 1, 1]


def test_a_level_is_reserved_only_when_it_runs_more_of_the_day_than_the_price_share():
    replicas = [1] * 12 + [2] * 6 + [3] * 6  # level 1: 24 h, level 2: 12 h, level 3: 6 h
    assert reserved_base(replicas, 0.6) == 1  # 12 / 24 = 0.5 is under 0.6
    assert reserved_base(replicas, 0.4) == 2  # 0.5 > 0.4, but 6 / 24 = 0.25 is not
    assert reserved_base(replicas, 0.2) == 3
    assert reserved_base(replicas, None) == 0


def test_the_scheduled_bill_is_the_base_all_month_plus_the_hours_above_on_demand():
    replicas = [1] * 12 + [3] * 12
    bill = scheduled_bill(
        replicas, on_demand_usd_per_replica_hour=10.0, reserved_usd_per_replica_hour=6.0
    )
    # Level 1 runs all day (1 > 0.6): reserved; levels 2 and 3 run half of it (0.5 < 0.6).
    assert bill.reserved_replicas == 1
    assert bill.replica_hours_per_day == 24
    days = 730 / 24
    assert bill.usd_per_month == pytest.approx(1 * 6.0 * 730 + 24 * 10.0 * days)


def test_without_a_reservation_the_schedule_is_on_demand_hour_by_hour():
    bill = scheduled_bill(
        DAY, on_demand_usd_per_replica_hour=3.0, reserved_usd_per_replica_hour=None
    )
    assert bill.reserved_replicas == 0
    assert bill.usd_per_month == pytest.approx(sum(DAY) * 3.0 * 730 / 24)


def test_the_schedule_never_costs_more_than_the_peak_on_demand_all_month():
    for reserved in (None, 1.0, 2.0, 2.9):
        bill = scheduled_bill(DAY, 3.0, reserved)
        assert bill.usd_per_month <= max(DAY) * 3.0 * 730 + 1e-6


def test_reserving_the_base_never_costs_more_than_renting_it_by_the_hour():
    on_demand_only = scheduled_bill(DAY, 3.0, None).usd_per_month
    for reserved in (0.5, 1.5, 2.5, 3.5):
        assert scheduled_bill(DAY, 3.0, reserved).usd_per_month <= on_demand_only + 1e-6


# Through the planner: reserved offers priced as their term's hourly equivalent, and a profile.
PROFILE = tuple(float(rate) for rate in DAY)
RESERVED_SHARE = {"reserved_1y": 0.6, "reserved_3y": 0.4}


def _offers_with_reservations():
    offers = {}
    for key, rows in OFFERS.items():
        on_demand = [row for row in rows if row.pricing_model == "on_demand"]
        reserved = [
            dataclasses.replace(row, pricing_model=term, usd_per_hour=row.usd_per_hour * share)
            for term, share in RESERVED_SHARE.items()
            for row in on_demand
        ]
        offers[key] = [*rows, *reserved]
    return offers


def _plan(pricing_model: str = "on_demand", hourly=PROFILE):
    workload = Workload(
        bundled_models()["llama-3.1-8b"].architecture(), pricing_model=pricing_model
    )
    load = Load(20, 2000, 300, hourly_requests_per_second=hourly)
    return plan_capacity(
        workload, load, Objectives(ttft_p95_ms=500), DEVICES, _offers_with_reservations()
    )


def test_reserved_bills_are_every_replica_all_month_at_the_terms_hourly_equivalent():
    best = _plan().plan
    on_demand = best.usd_per_month.on_demand
    assert best.usd_per_month.reserved_1y == pytest.approx(on_demand * 0.6)
    assert best.usd_per_month.reserved_3y == pytest.approx(on_demand * 0.4)
    assert best.reserved_1y_offer.pricing_model == "reserved_1y"


def test_the_schedule_follows_the_profile_and_reserves_what_runs_most_of_the_day():
    best = _plan().plan
    rate = best.max_requests_per_second_per_replica
    assert best.replicas_by_hour == replicas_by_hour(PROFILE, rate)
    assert max(best.replicas_by_hour) == best.replicas
    expected = scheduled_bill(
        best.replicas_by_hour,
        best.candidate.gpu_count * best.on_demand_offer.usd_per_gpu_hour,
        best.candidate.gpu_count * best.reserved_1y_offer.usd_per_gpu_hour,
    )
    assert best.reserved_replicas == expected.reserved_replicas >= 1
    assert best.usd_per_month.scheduled == pytest.approx(expected.usd_per_month)
    assert best.usd_per_month.scheduled < best.usd_per_month.on_demand


def test_the_average_is_the_profiles_mean():
    plan = _plan()
    assert plan.load.average == pytest.approx(sum(PROFILE) / 24)
    best = plan.plan
    assert best.utilization_at_average == pytest.approx(
        plan.load.average / (best.replicas * best.max_requests_per_second_per_replica)
    )


def test_without_a_profile_nothing_is_scheduled():
    best = _plan(hourly=None).plan
    assert best.usd_per_month.scheduled is None and best.replicas_by_hour is None


def test_any_pricing_ranks_by_the_cheapest_way_to_pay():
    best = _plan("any").plan
    bill = best.usd_per_month
    offered = [
        value
        for value in (bill.on_demand, bill.spot, bill.reserved_1y, bill.reserved_3y, bill.scheduled)
        if value is not None
    ]
    assert best.usd_per_month_ranked == min(offered)


def test_a_peak_above_the_busiest_hour_is_a_burst_every_hour_is_sized_for():
    quiet = tuple(rate / 4 for rate in PROFILE)  # busiest hour 5 requests/s, the peak 20
    best = _plan(hourly=quiet).plan
    rate = best.max_requests_per_second_per_replica
    assert best.replicas_by_hour == replicas_by_hour(PROFILE, rate)  # scaled back by 20 / 5
    assert max(best.replicas_by_hour) == best.replicas


def test_a_plan_without_an_on_demand_offer_still_gets_its_hourly_replicas():
    spot_only = {
        key: [row for row in rows if row.pricing_model != "on_demand"]
        for key, rows in _offers_with_reservations().items()
    }
    workload = Workload(bundled_models()["llama-3.1-8b"].architecture(), pricing_model="any")
    load = Load(20, 2000, 300, hourly_requests_per_second=PROFILE)
    plan = plan_capacity(workload, load, Objectives(ttft_p95_ms=500), DEVICES, spot_only)
    best = plan.plan
    assert best.replicas_by_hour is not None and best.usd_per_month.scheduled is None


def test_candidates_that_meet_but_have_no_offer_to_rent_say_why_there_is_no_plan():
    from advisor.domain.planning.report import capacity_report
    from advisor.domain.sizing.rental import Rental

    workload = Workload(
        bundled_models()["llama-3.1-8b"].architecture(), rental=Rental(providers=("nobody",))
    )
    load = Load(20, 2000, 300)
    plan = plan_capacity(workload, load, Objectives(ttft_p95_ms=500), DEVICES, OFFERS)
    report = capacity_report(plan)
    assert plan.meeting and report["plan"] is None
    assert "none has an offer" in report["why_no_plan"] and "nobody" in report["why_no_plan"]
    assert capacity_report(_plan())["why_no_plan"] is None
