"""One JSON shape for a capacity plan: the API returns it, `manage.py plan` prints it."""

from typing import Any

from advisor.domain.planning.capacity import CapacityPlan, ReplicaPlan
from advisor.domain.planning.remedies import what_would_meet
from advisor.domain.sizing.report import offer_report, stack_report


def _ends(values: tuple[float | None, ...] | None) -> dict[str, float | None] | None:
    if values is None:
        return None
    return {
        end: None if value is None else round(value, 2)
        for end, value in zip(("low", "expected", "high"), values, strict=True)
    }


def _dollars(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def replica_plan_report(plan: ReplicaPlan) -> dict[str, Any]:
    candidate = plan.candidate
    bill = plan.usd_per_month
    rate = plan.max_requests_per_second_per_replica
    return {
        "gpu": candidate.device.key,
        "gpu_name": candidate.device.name,
        "gpu_count": candidate.gpu_count,
        "parallelism": candidate.parallelism.describe(),
        "fits": candidate.fits,
        "meets_objectives": plan.meets,
        "reason": plan.reason,
        "limit": plan.limit,
        # Six significant figures: a slow replica's 0.0004 requests/s is not rounded to 0.
        "max_requests_per_second_per_replica": None if rate is None else float(f"{rate:.6g}"),
        "replicas": plan.replicas,
        "gpus_total": plan.gpus_total,
        "spot_replicas": plan.spot_replicas,
        "utilization_at_average": (
            None if plan.utilization_at_average is None else round(plan.utilization_at_average, 3)
        ),
        "ttft_p95_ms": _ends(plan.ttft_p95_ms),
        "itl_p95_ms": _ends(plan.itl_p95_ms),
        "e2e_p95_ms": _ends(plan.e2e_p95_ms),
        "kv_capacity_tokens": candidate.kv_capacity_tokens,
        "offer": offer_report(plan.offer),
        "usd_per_month": {
            "on_demand": _dollars(bill.on_demand),
            "spot": _dollars(bill.spot),
            "reserved_1y": _dollars(bill.reserved_1y),
            "reserved_3y": _dollars(bill.reserved_3y),
            "scheduled": _dollars(bill.scheduled),
        },
        # The bill the ranking read (the request's pricing model; for "any", the cheapest).
        "usd_per_month_ranked": _dollars(plan.usd_per_month_ranked),
        "offers": {
            "on_demand": offer_report(plan.on_demand_offer),
            "spot": offer_report(plan.spot_offer),
            "reserved_1y": offer_report(plan.reserved_1y_offer),
            "reserved_3y": offer_report(plan.reserved_3y_offer),
        },
        "replicas_by_hour": plan.replicas_by_hour,
        "reserved_replicas": plan.reserved_replicas,
        "warnings": candidate.warnings,
    }


def _why_no_plan(plan: CapacityPlan) -> str | None:
    """Why there is no plan although candidates meet the objectives: none is priced."""
    if plan.plan is not None or not plan.meeting:
        return None
    rental = plan.workload.rental.notes() or ["no constraint of yours"]
    return (
        f"{len(plan.meeting)} candidate{'' if len(plan.meeting) == 1 else 's'} meet the "
        f"objectives, but none has an offer to rent at {plan.workload.pricing_model} pricing "
        f"within {'; '.join(rental)}: loosen them or change the pricing model"
    )


def capacity_report(
    plan: CapacityPlan, *, max_candidates: int = 0, include_rejected: bool = False
) -> dict[str, Any]:
    """The plan and the candidates: the first `max_candidates` that run (0: all), and with
    `include_rejected` those that do not run too."""
    running = [p for p in plan.candidates if p.candidate.fits]
    listed = running[:max_candidates] if max_candidates else running
    if include_rejected:
        listed += [p for p in plan.candidates if not p.candidate.fits]
    best = plan.plan
    load, workload = plan.load, plan.workload
    return {
        "model": {
            "name": workload.architecture.name,
            "params_total": workload.architecture.params_total,
            "params_active": workload.architecture.params_active,
        },
        "stack": stack_report(workload),
        "load": {
            "requests_per_second": load.requests_per_second,
            "average_requests_per_second": load.average_requests_per_second,
            "hourly_requests_per_second": (
                list(load.hourly_requests_per_second) if load.hourly_requests_per_second else None
            ),
            "average_used": round(load.average, 4),
            "prompt_tokens": load.prompt_tokens,
            "output_tokens": load.output_tokens,
            "prompt_tokens_p95": load.prompt_tokens_p95,
            "output_tokens_p95": load.output_tokens_p95,
        },
        "objectives": plan.objectives.given(),
        "pricing_model": workload.pricing_model,
        "plan": replica_plan_report(best) if best else None,
        "candidates": [replica_plan_report(p) for p in listed],
        "candidates_meeting": len(plan.meeting),
        "candidates_running": len(running),
        "candidates_total": len(plan.candidates),
        "assumptions": plan.assumptions,
        "why_no_plan": _why_no_plan(plan),
        "what_would_meet": (
            None
            if plan.meeting
            else [
                {
                    "change": change.change,
                    "field": change.field,
                    "value": change.value,
                    "sentence": change.sentence,
                }
                for change in what_would_meet(plan)
            ]
        ),
    }
