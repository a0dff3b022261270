"""The order of an answer's candidates: what runs and is priced first, by the goal; what runs
without an offer next; what does not run last, closest to running first.

Costs that tie within COST_TIE_FRACTION are the same bill to a team, so among them what is
simpler to rent and run goes first: fewer GPUs, no tensor parallelism over PCIe, a provider that
is not a marketplace, a live price. A training job may still lead with the faster layout at the
same bill; the answer then names the equal-cost alternative with fewer GPUs.
"""

from collections.abc import Callable, Sequence

from advisor.domain.sizing.workload import Goal, Workload
from catalog.domain.freshness import LIVE

COST_TIE_FRACTION = 0.04


def candidate_cost(candidate) -> float:
    """What the answer's goal of cheapest compares: per job (training), per million tokens
    (serving), else per hour."""
    if candidate.usd_per_job:
        return candidate.usd_per_job.expected
    if candidate.usd_per_million_tokens:
        return candidate.usd_per_million_tokens.expected
    return candidate.offer.usd_per_hour


def candidate_duration(candidate) -> float:
    """Hours of a training job, or seconds per request of a serving one."""
    if candidate.training:
        return candidate.training.hours.expected
    if candidate.speed:
        return candidate.speed.seconds_per_request.expected
    return 0.0


def tensor_parallel_over_pcie(candidate) -> bool:
    return candidate.device.tensor_parallel_over_pcie(candidate.parallelism.tensor_parallel)


def _simplicity(workload: Workload) -> Callable:
    def key(candidate) -> tuple:
        offer = candidate.offer
        rent = (offer.is_marketplace, offer.freshness != LIVE)
        if workload.goal is Goal.FASTEST:
            return (tensor_parallel_over_pcie(candidate), *rent, candidate_cost(candidate))
        if workload.task.trains:
            # The same bill: the faster layout may lead (the alternative is named).
            return (tensor_parallel_over_pcie(candidate), *rent, candidate_duration(candidate))
        return (
            candidate.gpu_count,
            tensor_parallel_over_pcie(candidate),
            *rent,
            candidate_cost(candidate),
        )

    return key


def _primary(workload: Workload) -> Callable:
    if workload.goal is Goal.FASTEST:
        return candidate_duration
    return candidate_cost


def tie_groups(workload: Workload, priced: Sequence) -> list[list]:
    """The priced candidates in groups whose primary figure (cost, or duration for the
    fastest goal) is within COST_TIE_FRACTION of the group's best, best group first."""
    primary = _primary(workload)
    remaining = sorted(priced, key=lambda c: (primary(c), candidate_duration(c), c.gpu_count))
    groups = []
    while remaining:
        bound = primary(remaining[0]) * (1 + COST_TIE_FRACTION)
        groups.append([c for c in remaining if primary(c) <= bound])
        remaining = [c for c in remaining if primary(c) > bound]
    return groups


def rank(workload: Workload, candidates: Sequence) -> list:
    """The candidates in answer order; the first's `equal_cost_alternative` is set when a
    candidate with fewer GPUs ties with it on cost (training: the faster layout leads)."""
    priced = [c for c in candidates if c.fits and c.offer]
    unpriced = sorted(
        (c for c in candidates if c.fits and not c.offer),
        key=lambda c: (c.gpu_count, c.device.name),
    )
    rejected = sorted(
        (c for c in candidates if not c.fits),
        key=lambda c: (c.memory.total / c.usable_bytes, c.device.name, c.gpu_count),
    )
    ordered = []
    for group in tie_groups(workload, priced):
        ordered.extend(sorted(group, key=_simplicity(workload)))
        if len(ordered) == len(group):
            _name_the_alternative(ordered[0], group)
    return [*ordered, *unpriced, *rejected]


def _name_the_alternative(lead, group: Sequence) -> None:
    fewer = [c for c in group if c.gpu_count < lead.gpu_count]
    if fewer:
        lead.equal_cost_alternative = min(fewer, key=lambda c: (c.gpu_count, candidate_cost(c)))
