"""The sizing answer as the page shows it: numbers formatted, rows for the tables, and the
memory and cost charts assembled from the report (advisor/charts/ draws them)."""

import math
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.urls import NoReverseMatch, reverse

from advisor import charts
from advisor.choice_labels import CHOICE_LABELS
from advisor.comparison import compared, comparison_key
from advisor.domain.sizing.ranking import COST_TIE_FRACTION
from advisor.domain.sizing.recommend import Rejection
from catalog.domain.freshness import freshness_note

GIB = 2**30
MEMORY_CHART_FITTING = 12
# The charts are drawn twice: for a wide screen, and narrower with fewer bars for a phone, whose
# text would otherwise shrink to half its size (the page shows one by the screen's width).
CHART_WIDTH = 640.0
PHONE_CHART_WIDTH = 360.0
PHONE_MEMORY_CHART_FITTING = 6
MEMORY_CHART_REJECTED = 3
TABLE_ROWS = 20
COULD_NOT_SIZE = Rejection.COULD_NOT_SIZE
# The few GPU types whose MIG slices serve a copy cheapest; the JSON answer has them all.
MIG_SLICE_ROWS = 5


def _fmt(value: float | None, suffix: str = "") -> str:
    if value is None or not math.isfinite(value):
        return "—"
    return charts.format_number(value) + suffix


def _usd(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    if value >= 100:
        return f"${value:,.0f}"
    return f"${value:,.2f}"


def _range_text(values: dict | None, fmt) -> str:
    if not values:
        return ""
    return f"{fmt(values['low'])}–{fmt(values['high'])}"


def _hours(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    if value < 1:
        return f"{value * 60:.0f} min"
    return _fmt(value, " h")


def _region(region: str) -> str:
    """Catalogue regions as people read them: no placeholder, no empty parts."""
    parts = [part.strip() for part in region.split(",") if part.strip()]
    text = ", ".join(parts)
    return "" if text.lower() in {"default", "global", "any"} else text


def _price_age(offer: dict[str, Any] | None) -> str:
    """The offer's freshness as the page says it: "bundled snapshot of 2026-01-01"."""
    if not offer or not offer.get("price_observed_at"):
        return ""
    observed = datetime.fromisoformat(offer["price_observed_at"])
    return freshness_note(offer["freshness"], observed)


def _network_text(offer: dict[str, Any] | None) -> str:
    """The instance's inter-node fabric as the page says it: "EFA v2, 3,200 Gbps"."""
    network = (offer or {}).get("network")
    if not network:
        return ""
    if network["assumed"]:
        return network["fabric"]
    return f"{network['fabric']}, {network['network_gbps']:,.0f} Gbps between instances"


def _candidate_row(candidate: dict[str, Any], training: bool) -> dict[str, Any]:
    offer = candidate.get("offer")
    try:
        gpu_url = reverse("catalog:gpu-detail", args=[candidate["gpu"]])
    except NoReverseMatch:
        gpu_url = None
    row = {
        "gpu": candidate["gpu"],
        "gpu_url": gpu_url,
        "gpu_name": candidate["gpu_name"],
        "count": candidate["gpu_count"],
        "label": f"{candidate['gpu_count']}× {candidate['gpu_name']}",
        "parallelism": candidate["parallelism"],
        "memory_gib": f"{candidate['memory_per_gpu_gib']:.1f}",
        "usable_gib": f"{candidate['usable_per_gpu_gib']:.1f}",
        "usd_per_hour": _usd(candidate.get("usd_per_hour")),
        "priced": candidate.get("usd_per_hour") is not None,
        "provider": offer["provider_name"] if offer else "",
        "marketplace": bool(offer and offer.get("provider_kind") == "marketplace"),
        "instance": offer["instance_type"] if offer else "",
        "region": _region(offer["region"]) if offer else "",
        "pricing_label": offer["pricing_model"].replace("_", "-") if offer else "",
        "pricing_url": offer.get("pricing_url") if offer else None,
        "price_age": _price_age(offer),
        "freshness": offer.get("freshness") if offer else "",
        "instances": candidate.get("instances", 1),
        "network": _network_text(offer),
        "network_url": ((offer or {}).get("network") or {}).get("source_url"),
        "warnings": candidate.get("warnings") or [],
        "reason": candidate["reason"],
        "rejection": candidate.get("rejection") or "",
        "missing": candidate.get("missing") or [],
        "compare_key": comparison_key(candidate),
        "memory_of_usable": (
            f"{candidate['memory_per_gpu_gib']:.1f} / {candidate['usable_per_gpu_gib']:.1f}"
        ),
    }
    where = [row["provider"], row["instance"], row["region"]]
    row["where"] = (
        " · ".join(part for part in where if part) if row["priced"] else "no offer to rent"
    )
    if training:
        hours = candidate.get("training_hours")
        job = candidate.get("usd_per_job")
        mfu = candidate.get("mfu")
        row |= {
            "speed": _hours(hours["expected"]) if hours else "—",
            "speed_range": _range_text(hours, _hours),
            "mfu": f"{mfu['expected']:.0%}" if mfu else "—",
            "mfu_range": _range_text(mfu, lambda value: f"{value:.0%}"),
            "cost": _usd(job["expected"]) if job else "—",
            "cost_range": _range_text(job, _usd),
        }
    else:
        # The sustained rate, prefill included, leads; the decode phase alone is faster.
        total = candidate.get("output_tokens_per_s_total") or candidate.get(
            "decode_tokens_per_s_total"
        )
        decode = candidate.get("decode_tokens_per_s_total")
        per_m = candidate.get("usd_per_million_tokens")
        request = candidate.get("seconds_per_request")
        first_token = candidate.get("time_to_first_token_seconds")
        row |= {
            "speed": _fmt(total["expected"]) if total else "—",
            "speed_range": _range_text(total, _fmt),
            "decode_speed": _fmt(decode["expected"]) if decode else "—",
            "per_sequence": _fmt(candidate["decode_tokens_per_s_per_sequence"]["expected"])
            if candidate.get("decode_tokens_per_s_per_sequence")
            else "—",
            "seconds_per_request": _fmt(request["expected"], " s") if request else "—",
            "first_token": _fmt(first_token["expected"] * 1000, " ms") if first_token else "—",
            "first_token_range": _range_text(first_token, lambda value: _fmt(value * 1000)),
            "cost": _usd(per_m["expected"]) if per_m else "—",
            "cost_range": _range_text(per_m, _usd),
            "max_users": candidate.get("max_concurrent_users"),
        }
    return row


def _memory_bar(candidate: dict[str, Any]) -> charts.MemoryBar:
    offer = candidate.get("offer")
    note = candidate["parallelism"]
    if offer:
        note += f"; {offer['provider_name']} at {_usd(candidate['usd_per_hour'])}/h"
    if not candidate["fits"]:
        note = candidate["reason"]
    return charts.MemoryBar(
        label=f"{candidate['gpu_name']} ×{candidate['gpu_count']}",
        components={key: value / GIB for key, value in candidate["memory"].items()},
        usable_gib=candidate["usable_per_gpu_gib"],
        fits=candidate["fits"],
        note=note,
    )


def _bill(candidate: dict[str, Any]) -> float | None:
    """What the ranking compares on cost: per job, per million tokens, else per hour."""
    for key in ("usd_per_job", "usd_per_million_tokens"):
        if candidate.get(key):
            return candidate[key]["expected"]
    return candidate.get("usd_per_hour")


def recommended_per_gpu_type(candidates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each GPU type once, in rank order, at the count the answer recommends for it: its first
    configuration, or the fewest GPUs of that type at the same bill (within the ranking's cost
    tie), as the answer's equal-cost alternative does. A training job ranks the faster layout
    first at the same bill; its memory bar at 8 GPUs would read as needing 8."""
    chosen: dict[str, dict[str, Any]] = {}
    for candidate in candidates:
        if not candidate["fits"]:
            continue
        first = chosen.setdefault(candidate["gpu"], candidate)
        bill, first_bill = _bill(candidate), _bill(first)
        same_bill = (
            bill is not None
            and first_bill is not None
            and bill <= first_bill * (1 + COST_TIE_FRACTION)
        )
        if same_bill and candidate["gpu_count"] < chosen[candidate["gpu"]]["gpu_count"]:
            chosen[candidate["gpu"]] = candidate
    return list(chosen.values())


def _memory_chart(
    report: dict[str, Any], width: float = CHART_WIDTH, most_fitting: int = MEMORY_CHART_FITTING
) -> str:
    candidates = report["candidates"]
    fitting = recommended_per_gpu_type(candidates)[:most_fitting]
    too_big = [
        c for c in candidates if not c["fits"] and c["memory_per_gpu_gib"] > c["usable_per_gpu_gib"]
    ]
    rejected: list[dict[str, Any]] = []
    best = report.get("recommendation")
    if best:
        # Why not fewer of the recommended GPU: its largest count that does not fit.
        same = [c for c in too_big if c["gpu"] == best["gpu"]]
        if same:
            rejected.append(max(same, key=lambda c: c["gpu_count"]))
    limit = MEMORY_CHART_REJECTED if fitting else MEMORY_CHART_FITTING
    fits_somewhere = {c["gpu"] for c in candidates if c["fits"]}
    shown = {c["gpu"] for c in fitting} | {c["gpu"] for c in rejected}
    # GPU types that fit at no count first, then the others; closest to fitting first (the
    # engine's rank order).
    for candidate in sorted(too_big, key=lambda c: c["gpu"] in fits_somewhere):
        if len(rejected) >= limit:
            break
        if candidate["gpu"] not in shown:
            shown.add(candidate["gpu"])
            rejected.append(candidate)
    bars = [_memory_bar(c) for c in fitting + rejected]
    if not bars:
        return ""
    return charts.memory_chart(bars, title="Memory per GPU, by component", width=width)


# The cost chart's axes, direction and title, for a training job and for serving.
_TRAINING_COST_CHART: dict[str, Any] = {
    "x_label": "Training time, hours (expected)",
    "y_label": "$ per job (expected)",
    "higher_x_is_better": False,
    "title": "Cost against training time",
}
_SERVING_COST_CHART: dict[str, Any] = {
    "x_label": "Decode throughput, tokens/s over all sequences (expected)",
    "y_label": "$ per million output tokens (expected)",
    "higher_x_is_better": True,
    "title": "Cost against speed",
    "empty_message": "No priced candidate generates tokens: nothing to plot.",
}


def _dollars(value: float) -> str:
    return "$" + charts.format_number(value)


def _cost_chart(report: dict[str, Any], training: bool, width: float = CHART_WIDTH) -> str:
    points = []
    best = report.get("recommendation")
    for candidate in report["candidates"]:
        if not candidate["fits"] or not candidate.get("offer"):
            continue
        if training:
            x, y = candidate.get("training_hours"), candidate.get("usd_per_job")
        else:
            x, y = (
                candidate.get("output_tokens_per_s_total")
                or candidate.get("decode_tokens_per_s_total"),
                candidate.get("usd_per_million_tokens"),
            )
        if not x or not y:
            continue
        label = f"{candidate['gpu_name']} ×{candidate['gpu_count']}"
        note = (
            f"{_hours(x['expected'])}, {_usd(y['expected'])} per job"
            if training
            else f"{_fmt(x['expected'])} tokens/s, {_usd(y['expected'])} per million tokens"
        ) + f"; {candidate['offer']['provider_name']} at {_usd(candidate['usd_per_hour'])}/h"
        recommended = bool(
            best and best["gpu"] == candidate["gpu"] and best["gpu_count"] == candidate["gpu_count"]
        )
        points.append(
            charts.Point(label, x["expected"], y["expected"], note=note, recommended=recommended)
        )
    texts = _TRAINING_COST_CHART if training else _SERVING_COST_CHART
    return charts.scatter_chart(points, y_format=_dollars, width=width, **texts)


def _mig_slices(candidates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One GPU shared between copies of the served model: each GPU type's slice, cheapest per
    copy first (unpriced last)."""
    rows = []
    for candidate in candidates:
        mig = candidate.get("mig_slice")
        if not (candidate["fits"] and mig):
            continue
        per_copy = mig["usd_per_hour_per_copy"]
        rows.append(
            {
                "summary": mig["summary"],
                "gpu_name": candidate["gpu_name"],
                "usd_per_hour_per_copy": _usd(per_copy) if per_copy is not None else "—",
                "usd_per_hour": _usd(candidate.get("usd_per_hour")),
                "copies": mig["copies_per_gpu"],
                "speed": _fmt(mig["tokens_per_second"]["expected"]),
                "speed_range": _range_text(mig["tokens_per_second"], _fmt),
                "tokens_counted": mig["tokens_counted"],
                "memory": f"{mig['memory_per_copy_gib']:.1f} of {mig['usable_gib']:.1f} GiB",
                "sort": (per_copy is None, per_copy or 0),
            }
        )
    return sorted(rows, key=lambda row: row["sort"])[:MIG_SLICE_ROWS]


def _memory_lines(best: dict[str, Any]) -> list[dict[str, str]]:
    """The recommendation's memory per GPU, line by line with its range, and the total."""
    ranges = best.get("memory_range") or {}
    rows = []
    for key, label in (*charts.MEMORY_COMPONENTS, ("total", "Total")):
        line = ranges.get(key)
        if not line or (key != "total" and not line["expected"]):
            continue
        rows.append(
            {
                "label": label,
                "gib": f"{line['expected'] / GIB:.2f}",
                "range": f"{line['low'] / GIB:.2f}–{line['high'] / GIB:.2f}",
            }
        )
    return rows


def _max_load_text(best: dict[str, Any]) -> str:
    """What the recommendation serves with every request queued at once."""
    rate = best.get("max_load_output_tokens_per_s")
    if not rate:
        return ""
    return (
        f"{_fmt(rate['expected'])} tokens/s ({_range_text(rate, _fmt)}) with "
        f"{best['max_load_concurrency']:,} requests at once, as many as the KV cache holds"
    )


def answer_context(report: dict[str, Any], compare: Sequence[str] = ()) -> dict[str, Any]:
    """The template's view of a sizing report (advisor.domain.sizing.report); `compare`: the
    comparison keys of the configurations to show side by side."""
    training = report["workload"]["task"] != "inference"
    candidates = report["candidates"]
    fitting = [_candidate_row(c, training) for c in candidates if c["fits"]]
    rejected = [_candidate_row(c, training) for c in candidates if not c["fits"]]
    best = report.get("recommendation")
    headline = None
    if best:
        row = _candidate_row(best, training)
        where = (
            f" on {row['provider']} at {row['usd_per_hour']}/h"
            if row["priced"]
            else " (no offer in the catalogue at this pricing, where you can rent)"
        )
        alternative = report.get("equal_cost_alternative")
        headline = {
            "row": row,
            "text": f"{row['label']}{where} — {row['memory_gib']} of {row['usable_gib']} GiB "
            "per GPU",
            "alternative": alternative["sentence"] if alternative else "",
            "rent_vs_buy": (best.get("rent_vs_buy") or {}).get("sentence", ""),
            "max_load": _max_load_text(best),
            "memory_lines": _memory_lines(best),
            "warnings": best.get("warnings") or [],
        }
    workload = report["workload"]
    task = workload["task"]
    return {
        "training": training,
        "task_label": CHOICE_LABELS["task"].get(task, task),
        "model": report["model"],
        "workload": workload,
        "stack": report["stack"],
        "headline": headline,
        "fitting": fitting[:TABLE_ROWS],
        "more_fitting": fitting[TABLE_ROWS:],
        "fitting_count": len(fitting),
        "mig_slices": [] if training else _mig_slices(candidates),
        "rejected": [row for row in rejected if row["rejection"] != COULD_NOT_SIZE],
        "could_not_size": [row for row in rejected if row["rejection"] == COULD_NOT_SIZE],
        "rejected_summary": report.get("rejected_summary", []),
        "candidates_running": report.get("candidates_running", len(fitting)),
        "remedies": report["remedies"],
        "assumptions": report["assumptions"],
        "memory_chart": _memory_chart(report),
        "memory_chart_phone": _memory_chart(
            report, PHONE_CHART_WIDTH, most_fitting=PHONE_MEMORY_CHART_FITTING
        ),
        "cost_chart": _cost_chart(report, training),
        "cost_chart_phone": _cost_chart(report, training, PHONE_CHART_WIDTH),
        "train_tokens": workload.get("train_tokens"),
        "deadline": report.get("deadline"),
        "comparison": compared(fitting, compare, training) if compare else None,
        "pricing_label": CHOICE_LABELS["pricing_model"]
        .get(workload["pricing_model"], workload["pricing_model"])
        .lower(),
    }
