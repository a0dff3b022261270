"""What would meet the objectives when no candidate does: the loosest target some candidate
meets (one request alone, on the fastest candidate for that objective), the longest prompt or
answer the fastest candidate meets them at, and how much faster a part would have to be; or,
when nothing runs at all, the sizing engine's remedies."""

import dataclasses
from dataclasses import dataclass

from advisor.domain.planning.capacity import (
    OBJECTIVE_LABELS,
    CapacityPlan,
    Load,
    ReplicaPlan,
    latency_ms,
    planning_workload,
    replica_traffic,
)
from advisor.domain.planning.queueing import NO_LOAD_RATE, ReplicaQueue
from advisor.domain.planning.timing import ReplicaTimes

_LENGTH_BISECTIONS = 24


@dataclass(frozen=True)
class Change:
    change: str  # "objective", "prompt_tokens", "output_tokens", "faster_part" or "sizing"
    field: str | None  # the request field it changes
    value: float | None  # the value that would meet (for a field)
    sentence: str


def _meets_alone(plan: CapacityPlan, best: ReplicaPlan, load: Load) -> bool:
    """Whether one request alone, at `load`'s lengths, meets every objective on `best`."""
    workload = planning_workload(plan.workload, load)
    candidate = best.candidate
    times = ReplicaTimes(workload, candidate.device, candidate.parallelism)
    traffic = replica_traffic(workload, candidate, load)
    latency = ReplicaQueue(times.at("expected"), traffic).at(NO_LOAD_RATE)
    return latency is not None and plan.objectives.missed(latency) is None


def _longest(plan: CapacityPlan, best: ReplicaPlan, field: str) -> int | None:
    """The longest prompt (or answer) at which one request alone meets the objectives on
    `best`, shorter than the load's; None when even one token does not. Where the load gives
    the field's p95, that is what is shortened (the mean no longer than it)."""
    load = plan.load
    tail_field = f"{field}_p95"
    tail = getattr(load, tail_field)

    def meets(tokens: int) -> bool:
        if tail:
            changes = {tail_field: tokens, field: min(getattr(load, field), tokens)}
        else:
            changes = {field: tokens}
        return _meets_alone(plan, best, dataclasses.replace(load, **changes))

    low, high = 1, tail or getattr(load, field)
    if not meets(low):
        return None
    for _ in range(_LENGTH_BISECTIONS):
        if high - low <= 1:
            break
        middle = (low + high) // 2
        low, high = (middle, high) if meets(middle) else (low, middle)
    return low


def _article(words: str) -> str:
    return "an" if words[:1] in "aeiou" else "a"


def what_would_meet(plan: CapacityPlan) -> list[Change]:
    """The changes that would let some candidate meet the objectives; empty when one does."""
    if plan.meeting:
        return []
    measured = [p for p in plan.candidates if p.no_load is not None]
    if not measured:
        return [
            Change("sizing", None, None, f"{remedy.name}: {remedy.effect}")
            for remedy in plan.remedies
        ]
    changes = []
    for name, target in plan.objectives.given().items():
        fastest = min(measured, key=lambda p: latency_ms(p.no_load, name))
        best_ms = latency_ms(fastest.no_load, name)
        if best_ms <= target:
            continue
        where = f"{fastest.candidate.gpu_count}x {fastest.candidate.device.name}"
        changes.append(
            Change(
                "objective",
                name,
                round(best_ms, 1),
                f"{_article(OBJECTIVE_LABELS[name])} {OBJECTIVE_LABELS[name]} target of "
                f"{best_ms:,.1f} ms or more: {where} "
                "meets that with one request at a time",
            )
        )
        changes.append(
            Change(
                "faster_part",
                None,
                round(best_ms / target, 2),
                f"a part {best_ms / target:,.2f}x faster than {where}, the fastest here on "
                f"the {OBJECTIVE_LABELS[name]}",
            )
        )
    fastest = min(
        measured,
        key=lambda p: max(
            latency_ms(p.no_load, name) / target for name, target in plan.objectives.given().items()
        ),
    )
    where = f"{fastest.candidate.gpu_count}x {fastest.candidate.device.name}"
    for field, what in (("prompt_tokens", "prompts"), ("output_tokens", "answers")):
        longest = _longest(plan, fastest, field)
        if longest is not None:
            tail = getattr(plan.load, f"{field}_p95") is not None
            changes.append(
                Change(
                    field,
                    f"{field}_p95" if tail else field,
                    longest,
                    f"{'p95 ' if tail else ''}{what} of at most {longest:,} tokens: {where} "
                    "then meets every objective with one request at a time",
                )
            )
    return changes
