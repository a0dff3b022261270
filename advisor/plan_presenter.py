"""What the /plan/ page shows of a capacity answer: the plan in a sentence, its bills, the
chart of each candidate's monthly bill against the objective, the replicas per hour, and the
candidates (those that meet first, then those that miss, each with its reason)."""

import math
from typing import Any

from advisor import charts
from advisor.domain.planning.capacity import OBJECTIVE_LABELS
from advisor.presenters import CHART_WIDTH, PHONE_CHART_WIDTH

BILL_LABELS = {
    "on_demand": "on demand",
    "spot": "spot, with spare replicas",
    "reserved_1y": "reserved 1 year",
    "reserved_3y": "reserved 3 years",
    "scheduled": "on the 24-hour schedule",
}


def _usd(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    return f"${value:,.0f}"


def _compact_usd(value: float) -> str:
    """An axis's dollars in few characters: $900, $10k, $2.5M."""
    for scale, suffix in ((1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"${charts.format_number(value / scale)}{suffix}"
    return f"${charts.format_number(value)}"


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{charts.format_number(value)} ms"


def _layout(candidate: dict[str, Any]) -> str:
    return f"{candidate['gpu_count']}× {candidate['gpu_name']}"


def _primary_objective(objectives: dict[str, float]) -> str:
    """The objective the chart's x axis shows: the first given of TTFT, ITL, end to end."""
    return next(name for name in OBJECTIVE_LABELS if name in objectives)


def _cost_chart(report: dict[str, Any], width: float) -> str:
    objective = _primary_objective(report["objectives"])
    target = report["objectives"][objective]
    best = report["plan"]
    points = []
    for candidate in report["candidates"]:
        latency = (candidate[objective] or {}).get("expected")
        bill = candidate["usd_per_month_ranked"]
        if not candidate["meets_objectives"] or latency is None or bill is None:
            continue
        recommended = bool(
            best and (best["gpu"], best["gpu_count"]) == (candidate["gpu"], candidate["gpu_count"])
        )
        points.append(
            charts.Point(
                _layout(candidate),
                latency,
                bill,
                note=f"{candidate['replicas']} replica{'' if candidate['replicas'] == 1 else 's'}, "
                f"{_usd(bill)} a month, "
                f"{_ms(latency)} at the peak",
                recommended=recommended,
            )
        )
    label = OBJECTIVE_LABELS[objective]
    return charts.scatter_chart(
        points,
        x_label=f"{label} at the peak, ms",
        y_label="USD per month",
        higher_x_is_better=False,
        title=f"Monthly bill against the {label} of each candidate that meets the objectives",
        y_format=_compact_usd,
        empty_message="No priced candidate meets the objectives.",
        width=width,
        frontier_label="cheapest for its latency",
        x_target=(target, f"objective {charts.format_number(target)} ms"),
    )


def _schedule_chart(plan: dict[str, Any], width: float) -> str:
    return charts.schedule_chart(
        plan["replicas_by_hour"],
        plan["reserved_replicas"] or 0,
        title=f"Replicas of {_layout(plan)} in each hour of the day",
        width=width,
    )


def _bills(plan: dict[str, Any]) -> list[dict[str, str]]:
    offers = plan["offers"]
    rows = []
    for name, label in BILL_LABELS.items():
        value = plan["usd_per_month"][name]
        offer = offers.get("on_demand" if name == "scheduled" else name)
        where = (
            f"{offer['provider_name']} {offer['instance_type']}, {offer['region']}" if offer else ""
        )
        rows.append(
            {
                "label": label,
                "usd_per_month": _usd(value),
                "offered": value is not None,
                "where": where,
                "cheapest": value is not None and value == plan["usd_per_month_ranked"],
            }
        )
    return rows


def _rent_vs_buy(ownership: dict[str, Any] | None) -> dict[str, str] | None:
    """The plan's part bought instead of rented: the sentence, and what a GPU-hour costs to
    own at the stated utilisation (typical purchase price, low to high beside it)."""
    if not ownership:
        return None
    tco = ownership["tco_usd_per_gpu_hour"]
    price = ownership["purchase_price"]
    return {
        "sentence": ownership["sentence"][:1].upper() + ownership["sentence"][1:],
        "tco": f"${tco['typical']:,.2f}",
        "tco_range": f"${tco['low']:,.2f}–${tco['high']:,.2f}",
        "utilization": f"{ownership['utilization']:.0%}",
        "price": f"${price['typical_usd']:,.0f} ({price['confidence']} confidence, "
        f"{price['kind'].replace('_', ' ')})",
    }


def _candidate_row(candidate: dict[str, Any]) -> dict[str, Any]:
    bill = candidate["usd_per_month"]
    return {
        "layout": _layout(candidate),
        "meets": candidate["meets_objectives"],
        "rate": charts.format_number(candidate["max_requests_per_second_per_replica"] or 0),
        "replicas": candidate["replicas"],
        "gpus_total": candidate["gpus_total"],
        "utilization": (
            f"{candidate['utilization_at_average']:.0%}"
            if candidate["utilization_at_average"] is not None
            else "—"
        ),
        "ttft": _ms((candidate["ttft_p95_ms"] or {}).get("expected")),
        "itl": _ms((candidate["itl_p95_ms"] or {}).get("expected")),
        "on_demand": _usd(bill["on_demand"]),
        "spot": _usd(bill["spot"]),
        "ranked": _usd(candidate["usd_per_month_ranked"]),
        "reason": candidate["reason"],
        "limit": candidate["limit"],
    }


def plan_context(report: dict[str, Any]) -> dict[str, Any]:
    """The page's view of a capacity answer (advisor/domain/planning/report.py's JSON)."""
    plan = report["plan"]
    context: dict[str, Any] = {
        "report": report,
        "objectives": [
            {"label": OBJECTIVE_LABELS[name], "ms": charts.format_number(value)}
            for name, value in report["objectives"].items()
        ],
        "meeting": [_candidate_row(c) for c in report["candidates"] if c["meets_objectives"]],
        "missing": [_candidate_row(c) for c in report["candidates"] if not c["meets_objectives"]],
        "cost_chart": _cost_chart(report, CHART_WIDTH),
        "cost_chart_phone": _cost_chart(report, PHONE_CHART_WIDTH),
    }
    if plan:
        context["plan"] = {
            "layout": _layout(plan),
            "replicas": plan["replicas"],
            "gpus_total": plan["gpus_total"],
            "bill": _usd(plan["usd_per_month_ranked"]),
            "rate": charts.format_number(plan["max_requests_per_second_per_replica"]),
            "utilization": f"{plan['utilization_at_average']:.0%}",
            "ttft": _ms(plan["ttft_p95_ms"]["expected"]),
            "itl": _ms(plan["itl_p95_ms"]["expected"]),
            "e2e": _ms(plan["e2e_p95_ms"]["expected"]),
            "bills": _bills(plan),
            "limit": plan["limit"],
            "rent_vs_buy": _rent_vs_buy(plan.get("rent_vs_buy")),
        }
        if plan["replicas_by_hour"]:
            context["plan"] |= {
                "schedule_chart": _schedule_chart(plan, CHART_WIDTH),
                "schedule_chart_phone": _schedule_chart(plan, PHONE_CHART_WIDTH),
                "replicas_by_hour": plan["replicas_by_hour"],
                "reserved_replicas": plan["reserved_replicas"],
            }
    return context
