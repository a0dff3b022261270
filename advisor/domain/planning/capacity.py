"""Capacity to a service-level objective: for every candidate the sizing engine makes (GPU type,
count and layout, the stack's support, the team's providers, regions and pricing), the most
requests per second one replica serves within the p95 objectives (queueing.py over the
engine's step times, timing.py), the replicas the peak needs, and the monthly bill; ranked by
the cheapest plan that meets every objective."""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from advisor.domain.devices import Device, Offer
from advisor.domain.planning.assumptions import (
    HOURS_PER_MONTH,
    SPOT_SPARE_REPLICA_FRACTION,
    planning_assumptions,
)
from advisor.domain.planning.queueing import NO_LOAD_RATE, Latency, ReplicaQueue, Traffic
from advisor.domain.planning.schedule import replicas_by_hour, scheduled_bill
from advisor.domain.planning.timing import ENDS, ReplicaTimes
from advisor.domain.sizing.recommend import Candidate, Remedy, recommend
from advisor.domain.sizing.rental import (
    ANY_PRICING,
    BILLED_PRICING_MODELS,
    ON_DEMAND,
    RESERVED_1Y,
    RESERVED_3Y,
    SPOT,
    offer_choose,
)
from advisor.domain.sizing.serving_memory import PREFILL_CHUNK_TOKENS
from advisor.domain.sizing.speed.serving_load import max_load_concurrency
from advisor.domain.sizing.workload import Workload

OBJECTIVE_LABELS = {
    "ttft_p95_ms": "time to first token (p95)",
    "itl_p95_ms": "inter-token latency (p95)",
    "e2e_p95_ms": "end-to-end time (p95)",
}
# The schedule's reserved base is bought for a year: a service's load three years out is not
# known well enough to commit to it.
SCHEDULE_BASE_TERM = RESERVED_1Y
# The search stops when the most a replica serves is known to this share.
_RATE_TOLERANCE = 0.01
_RATE_SEARCH_STEPS = 30


@dataclass(frozen=True)
class Load:
    requests_per_second: float  # at peak
    prompt_tokens: int  # the mean prompt
    output_tokens: int  # the mean answer
    average_requests_per_second: float | None = None
    # The rate in each hour of a day (24 values, the first from midnight), when known.
    hourly_requests_per_second: tuple[float, ...] | None = None
    # The p95 prompt and answer, when known (at least the means).
    prompt_tokens_p95: int | None = None
    output_tokens_p95: int | None = None

    def hourly_peaks(self) -> list[float]:
        """Each hour's rate to size for: the profile's rate times the peak's ratio to its
        busiest hour (a peak above the busiest hour's average is the burst inside an hour, and
        every hour is taken to burst alike)."""
        profile = self.hourly_requests_per_second or ()
        burst = self.requests_per_second / max(profile) if profile and max(profile) else 1.0
        return [rate * burst for rate in profile]

    @property
    def average(self) -> float:
        """The average rate: as given, else the profile's mean, else the peak."""
        if self.average_requests_per_second:
            return self.average_requests_per_second
        if self.hourly_requests_per_second:
            return sum(self.hourly_requests_per_second) / len(self.hourly_requests_per_second)
        return self.requests_per_second


@dataclass(frozen=True)
class Objectives:
    ttft_p95_ms: float | None = None
    itl_p95_ms: float | None = None
    e2e_p95_ms: float | None = None

    def given(self) -> dict[str, float]:
        targets = {name: getattr(self, name) for name in OBJECTIVE_LABELS}
        return {name: target for name, target in targets.items() if target is not None}

    def missed(self, latency: Latency) -> tuple[str, float, float] | None:
        """The first objective `latency` misses: its name, the latency and the target (ms)."""
        for name, target in self.given().items():
            value = latency_ms(latency, name)
            if value > target:
                return name, value, target
        return None


def latency_ms(latency: Latency, objective: str) -> float:
    """The latency an objective names, in milliseconds."""
    seconds = {
        "ttft_p95_ms": latency.ttft_p95_s,
        "itl_p95_ms": latency.itl_p95_s,
        "e2e_p95_ms": latency.e2e_p95_s,
    }[objective]
    return seconds * 1e3


@dataclass(frozen=True)
class MonthlyBill:
    """USD a month of the plan's replicas, per pricing model; None where not offered (no
    offer at that pricing model, or no 24-hour profile for the schedule)."""

    on_demand: float | None
    spot: float | None
    reserved_1y: float | None = None
    reserved_3y: float | None = None
    scheduled: float | None = None


@dataclass
class ReplicaPlan:
    candidate: Candidate
    meets: bool
    reason: str
    max_requests_per_second_per_replica: float | None = None
    limit: str | None = None  # what stops one replica from serving more, when it meets
    replicas: int | None = None
    spot_replicas: int | None = None
    utilization_at_average: float | None = None
    # At the peak, spread over the replicas: low / expected / high, None where the replica
    # does not keep up at that end of the step times.
    ttft_p95_ms: tuple[float | None, float | None, float | None] | None = None
    itl_p95_ms: tuple[float | None, float | None, float | None] | None = None
    e2e_p95_ms: tuple[float | None, float | None, float | None] | None = None
    offer: Offer | None = None  # the offer the ranking bill is priced on
    on_demand_offer: Offer | None = None
    spot_offer: Offer | None = None
    reserved_1y_offer: Offer | None = None
    reserved_3y_offer: Offer | None = None
    # The schedule: replicas in each hour of the profile, and the base of them reserved.
    replicas_by_hour: list[int] | None = None
    reserved_replicas: int | None = None
    usd_per_month: MonthlyBill = field(default_factory=lambda: MonthlyBill(None, None))
    usd_per_month_ranked: float | None = None  # the bill of the request's pricing model
    # One request alone (expected step times): what the objectives are compared with when no
    # load meets them.
    no_load: Latency | None = None

    @property
    def gpus_total(self) -> int | None:
        return self.replicas * self.candidate.gpu_count if self.replicas else None


@dataclass
class CapacityPlan:
    workload: Workload
    load: Load
    objectives: Objectives
    candidates: list[ReplicaPlan]
    assumptions: list[str]
    remedies: list[Remedy]  # the engine's, when nothing runs at all

    @property
    def plan(self) -> ReplicaPlan | None:
        """The cheapest plan that meets every objective, where one is priced."""
        return next((p for p in self.candidates if p.meets and p.usd_per_month_ranked), None)

    @property
    def meeting(self) -> list[ReplicaPlan]:
        return [p for p in self.candidates if p.meets]


def planning_workload(workload: Workload, load: Load) -> Workload:
    """The workload a plan sizes: one request's prompt and answer, one at a time (the
    queueing model sets the concurrency)."""
    return workload.with_changes(
        batch_size=1,
        context_tokens=load.prompt_tokens + load.output_tokens,
        output_tokens=load.output_tokens,
    )


def replica_traffic(workload: Workload, candidate: Candidate, load: Load | None = None) -> Traffic:
    """What one replica of a candidate serves: the prompts and answers, the prefill budget, and
    the requests its KV pool admits at their final length (serving_load.py)."""
    pool = candidate.kv_capacity_tokens
    concurrency = max_load_concurrency(workload, pool) if workload.architecture.has_kv_cache else 0
    return Traffic(
        prompt_tokens=workload.context_tokens - workload.output_tokens,
        output_tokens=workload.output_tokens,
        chunk_tokens=PREFILL_CHUNK_TOKENS,
        max_concurrency=concurrency,
        prompt_tokens_p95=load.prompt_tokens_p95 if load else None,
        output_tokens_p95=load.output_tokens_p95 if load else None,
    )


def _why_not_more(queue: ReplicaQueue, latency: Latency | None, objectives: Objectives) -> str:
    if latency is None:
        return queue.limit
    missed = objectives.missed(latency)
    if missed is None:
        return queue.limit
    name, value, target = missed
    # Enough digits to tell the latency from the target it passes (500.4 ms, not 500 ms).
    digits = 0 if round(value) != round(target) else 1 if round(value, 1) != target else 2
    return f"the {OBJECTIVE_LABELS[name]} passes {target:,.0f} ms ({value:,.{digits}f} ms)"


def _margin(latency: Latency, objectives: Objectives) -> float:
    """How far past its target the tightest objective is, as a share (negative: inside)."""
    ratios = (latency_ms(latency, name) / target for name, target in objectives.given().items())
    return max(ratios) - 1


def max_rate_within(queue: ReplicaQueue, objectives: Objectives) -> tuple[float, str]:
    """The most requests per second one replica serves within the objectives, and what stops
    more (0 when one request alone misses them).

    The tightest objective's margin rises with the rate: the search brackets where it crosses
    zero and narrows the bracket by false position (the Illinois rule, so both ends move),
    halving instead where the upper end answers no latency at all (past the queue's bound or
    the KV pool)."""
    low, high = 0.0, queue.rate_bound()
    latency = queue.at(high)
    if latency is not None and objectives.missed(latency) is None:
        queue.at(high * (1 + _RATE_TOLERANCE))
        return high, queue.limit
    why = _why_not_more(queue, latency, objectives)
    alone = queue.at(NO_LOAD_RATE)
    low_margin = _margin(alone, objectives) if alone is not None else -1.0
    high_margin = _margin(latency, objectives) if latency is not None else None
    kept = 0  # which end stayed last time: -1 the low, +1 the high
    for _ in range(_RATE_SEARCH_STEPS):
        if low and high - low <= _RATE_TOLERANCE * low:
            break
        if high_margin is None or high_margin <= low_margin:
            middle = (low + high) / 2
        else:
            crossing = high - high_margin * (high - low) / (high_margin - low_margin)
            middle = min(max(crossing, low + 0.01 * (high - low)), high - 0.01 * (high - low))
        latency = queue.at(middle)
        if latency is not None and objectives.missed(latency) is None:
            low, low_margin = middle, _margin(latency, objectives)
            if kept == -1 and high_margin is not None:
                high_margin /= 2
            kept = -1
        else:
            high, why = middle, _why_not_more(queue, latency, objectives)
            high_margin = _margin(latency, objectives) if latency is not None else None
            if kept == 1:
                low_margin /= 2
            kept = 1
    return low, why


def _no_load_reason(
    name: str, value: float, target: float, traffic: Traffic, candidate: Candidate
) -> str:
    layout = f"{candidate.gpu_count}x {candidate.device.name}"
    prompt = traffic.prompt_tokens_p95 or traffic.prompt_tokens
    if name == "ttft_p95_ms":
        what = f"the prefill of one {prompt:,}-token prompt alone takes {value:,.0f} ms on {layout}"
    elif name == "itl_p95_ms":
        what = f"one decode step alone takes {value:,.1f} ms on {layout}"
    else:
        what = f"one request alone takes {value:,.0f} ms end to end on {layout}"
    return f"{what}, over the {target:,.0f} ms {OBJECTIVE_LABELS[name]} target at any rate"


@dataclass(frozen=True)
class _Billing:
    offers: dict[str, Offer | None]  # per pricing model
    bill: MonthlyBill
    spot_replicas: int
    replicas_by_hour: list[int] | None
    reserved_replicas: int | None


def _bills(
    workload: Workload,
    load: Load,
    candidate: Candidate,
    offers: Sequence[Offer],
    replicas: int,
    rate_per_replica: float,
) -> _Billing:
    """The offers for the candidate's GPU count at each pricing model (within the team's
    rental constraints), the month's bill on each, and the schedule the 24-hour profile
    needs."""
    chosen = {
        model: offer_choose(
            offers, gpu_count=candidate.gpu_count, rental=workload.rental, pricing_model=model
        )
        for model in BILLED_PRICING_MODELS
    }
    spot_replicas = replicas + max(1, math.ceil(SPOT_SPARE_REPLICA_FRACTION * replicas))
    monthly = {
        model: monthly_usd(offer, spot_replicas if model == SPOT else replicas) if offer else None
        for model, offer in chosen.items()
    }
    hourly, schedule = None, None
    if load.hourly_requests_per_second:
        hourly = replicas_by_hour(load.hourly_peaks(), rate_per_replica)
    if hourly and chosen[ON_DEMAND]:
        base = chosen[SCHEDULE_BASE_TERM]
        schedule = scheduled_bill(
            hourly,
            replica_usd_per_hour(chosen[ON_DEMAND], candidate.gpu_count),
            replica_usd_per_hour(base, candidate.gpu_count) if base else None,
        )
    return _Billing(
        offers=chosen,
        bill=MonthlyBill(
            on_demand=monthly[ON_DEMAND],
            spot=monthly[SPOT],
            reserved_1y=monthly[RESERVED_1Y],
            reserved_3y=monthly[RESERVED_3Y],
            scheduled=schedule.usd_per_month if schedule else None,
        ),
        spot_replicas=spot_replicas,
        replicas_by_hour=hourly,
        reserved_replicas=schedule.reserved_replicas if schedule else None,
    )


def replica_usd_per_hour(offer: Offer, gpu_count: int) -> float:
    """One replica of `gpu_count` GPUs for an hour at the offer's price per GPU-hour (for a
    reservation, the hourly equivalent of its term's price)."""
    return gpu_count * offer.usd_per_gpu_hour


def monthly_usd(offer: Offer, replicas: int) -> float:
    """HOURS_PER_MONTH of `replicas` replicas, each the offer's GPUs at its price per GPU-hour."""
    return HOURS_PER_MONTH * replicas * replica_usd_per_hour(offer, offer.gpu_count)


def _ranked_bill(pricing_model: str, plan: ReplicaPlan) -> tuple[float | None, Offer | None]:
    """The bill a plan is ranked by: the request's pricing model; for "any", the cheapest way
    to pay that is offered (on demand, spot, reserved or the schedule)."""
    bill = plan.usd_per_month
    every = [
        (bill.on_demand, plan.on_demand_offer),
        (bill.spot, plan.spot_offer),
        (bill.reserved_1y, plan.reserved_1y_offer),
        (bill.reserved_3y, plan.reserved_3y_offer),
        (bill.scheduled, plan.on_demand_offer),
    ]
    choices = {
        ON_DEMAND: every[:1],
        SPOT: every[1:2],
        ANY_PRICING: every,
    }[pricing_model]
    priced = [choice for choice in choices if choice[0] is not None]
    return min(priced, key=lambda choice: choice[0]) if priced else (None, None)


def _at_peak(
    times: ReplicaTimes, expected: ReplicaQueue, rate: float
) -> dict[str, tuple[float | None, ...]]:
    """The p95 latencies at `rate` per replica, at each end of the step times."""
    queues = {
        end: expected
        if end == "expected"
        else ReplicaQueue(times.at(end), expected.traffic, expected)
        for end in ENDS
    }
    ends = [queues[end].at(rate) for end in ENDS]
    return {
        name: tuple(None if latency is None else latency_ms(latency, name) for latency in ends)
        for name in OBJECTIVE_LABELS
    }


def _replica_plan(
    workload: Workload,
    load: Load,
    objectives: Objectives,
    candidate: Candidate,
    offers: Sequence[Offer],
) -> ReplicaPlan:
    traffic = replica_traffic(workload, candidate, load)
    if traffic.max_concurrency < 1:
        return ReplicaPlan(
            candidate, False, "the KV pool does not hold one whole request at this length"
        )
    times = ReplicaTimes(workload, candidate.device, candidate.parallelism)
    queue = ReplicaQueue(times.at("expected"), traffic)
    no_load = queue.at(NO_LOAD_RATE)
    if no_load is None:
        return ReplicaPlan(candidate, False, queue.limit)
    missed = objectives.missed(no_load)
    if missed is not None:
        reason = _no_load_reason(*missed, traffic, candidate)
        return ReplicaPlan(candidate, False, reason, no_load=no_load)
    rate, why = max_rate_within(queue, objectives)
    if rate <= 0:
        return ReplicaPlan(candidate, False, f"no rate is served within them: {why}")
    replicas = math.ceil(load.requests_per_second / rate - 1e-9)
    billing = _bills(workload, load, candidate, offers, replicas, rate)
    at_peak = _at_peak(times, queue, load.requests_per_second / replicas)
    plan = ReplicaPlan(
        candidate,
        meets=True,
        reason=f"{rate:,.4g} requests/s per replica within the objectives; beyond, {why}",
        limit=why,
        max_requests_per_second_per_replica=rate,
        replicas=replicas,
        spot_replicas=billing.spot_replicas,
        utilization_at_average=load.average / (replicas * rate),
        ttft_p95_ms=at_peak["ttft_p95_ms"],
        itl_p95_ms=at_peak["itl_p95_ms"],
        e2e_p95_ms=at_peak["e2e_p95_ms"],
        on_demand_offer=billing.offers[ON_DEMAND],
        spot_offer=billing.offers[SPOT],
        reserved_1y_offer=billing.offers[RESERVED_1Y],
        reserved_3y_offer=billing.offers[RESERVED_3Y],
        replicas_by_hour=billing.replicas_by_hour,
        reserved_replicas=billing.reserved_replicas,
        usd_per_month=billing.bill,
        no_load=no_load,
    )
    plan.usd_per_month_ranked, plan.offer = _ranked_bill(workload.pricing_model, plan)
    return plan


def _order(plans: list[ReplicaPlan], objectives: Objectives) -> list[ReplicaPlan]:
    """Priced plans that meet, cheapest first (fewer GPUs on a tie); then unpriced ones, fewest
    GPUs first; then what misses, closest first; then what does not run, in engine order."""

    def shortfall(plan: ReplicaPlan) -> float:
        if plan.no_load is None:
            return math.inf
        return max(
            latency_ms(plan.no_load, name) / target for name, target in objectives.given().items()
        )

    priced = [p for p in plans if p.meets and p.usd_per_month_ranked is not None]
    unpriced = [p for p in plans if p.meets and p.usd_per_month_ranked is None]
    missing = [p for p in plans if not p.meets and p.candidate.fits]
    rejected = [p for p in plans if not p.candidate.fits]
    return [
        *sorted(
            priced, key=lambda p: (p.usd_per_month_ranked, p.gpus_total, p.candidate.device.name)
        ),
        *sorted(unpriced, key=lambda p: (p.gpus_total, p.candidate.device.name)),
        *sorted(missing, key=lambda p: (shortfall(p), p.candidate.device.name)),
        *rejected,
    ]


def plan_capacity(
    workload: Workload,
    load: Load,
    objectives: Objectives,
    devices: Sequence[Device],
    offers_by_device: Mapping[str, Sequence[Offer]],
) -> CapacityPlan:
    """Every candidate of the sizing engine planned for the load within the objectives.
    `offers_by_device` holds on-demand and spot offers alike: each plan is billed on both."""
    if not objectives.given():
        raise ValueError("ttft_p95_ms: give at least one objective")
    workload = planning_workload(workload, load)
    sizing = recommend(workload, devices, offers_by_device)
    plans = [
        _replica_plan(workload, load, objectives, c, offers_by_device.get(c.device.key, ()))
        if c.fits
        else ReplicaPlan(c, False, c.reason)
        for c in sizing.candidates
    ]
    stated = planning_assumptions(
        load.prompt_tokens,
        load.output_tokens,
        PREFILL_CHUNK_TOKENS,
        workload.pricing_model,
        hourly_profile=load.hourly_requests_per_second is not None,
        tail_lengths=bool(load.prompt_tokens_p95 or load.output_tokens_p95),
    )
    return CapacityPlan(
        workload=workload,
        load=load,
        objectives=objectives,
        candidates=_order(plans, objectives),
        assumptions=[*sizing.assumptions, *stated],
        remedies=sizing.remedies,
    )
