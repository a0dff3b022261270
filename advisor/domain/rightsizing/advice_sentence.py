"""One sentence a person can act on, from the projections.

A move is recommended only when even the pessimistic end of its projected cost per step is at
least MIN_SAVING below what the current GPU costs per step: changing GPU costs testing time, and
the projection's own +/-15 % must not be what makes a candidate look cheaper. Cost per step
already prices speed in, so a GPU cheaper per hour but slower by more than its discount is never
the pick. When the current GPU has no offer, the cheapest fitting one is named without a saving.
"""

from collections.abc import Sequence

from advisor.domain.rightsizing.observed import ObservedJob
from advisor.domain.rightsizing.projection import Projection
from advisor.domain.rightsizing.verdict import Verdict

MIN_SAVING = 0.10
# Within this of the current step time is "about the same speed".
SAME_SPEED = 0.10
_GIB = 2**30
# Letters whose spoken name starts with a vowel sound: "an H100", "an L4", "a T4".
_AN_LETTERS = frozenset("AEFHILMNORSX")


def rent_advice(
    job: ObservedJob, projections: Sequence[Projection], *, verdict: Verdict | None = None
) -> str:
    """What to rent, alone: the move and what it saves, or why to keep the GPU."""
    current = next(projection for projection in projections if projection.is_current)
    name = current.device.name
    options = [
        projection
        for projection in projections
        if projection.fits and not projection.is_current and projection.best_offer
    ]
    baseline = current.best_offer
    if baseline is None:
        if not options:
            return f"no offer to compare the {name} with"
        cheapest = min(options, key=_expected_cost)
        return (
            f"no {current.gpu_count}-GPU {name} instance is priced; cheapest per step "
            f"is {_a(cheapest)}{_instance(cheapest, current)} at "
            f"${_expected_cost(cheapest):.2f} per 1,000 steps, {_speed(cheapest, current)}"
        )
    base_cost = baseline.usd_per_1000_steps.expected
    cheaper = [
        projection
        for projection in options
        if _cost(projection, "high") <= base_cost * (1 - MIN_SAVING)
    ]
    if not cheaper:
        why = f"{verdict.kind} at " if verdict else ""
        if not options and job.peak_memory_bytes:
            return (
                f"keep the {name}: no other GPU on offer holds the job's "
                f"{job.peak_memory_bytes / _GIB:.1f} GB peak"
            )
        return (
            f"keep the {name}: {why}{100 - job.idle_pct:.0f}% busy, nothing cheaper is "
            "faster per dollar"
        )
    best = min(cheaper, key=_expected_cost)
    saving_pct = 100 * (1 - _expected_cost(best) / base_cost)
    # A whole idle machine against one GPU saves over 99.5 %: "100% less" would read as free.
    saving = f"{saving_pct:.1f}" if saving_pct >= 99.5 else f"{saving_pct:.0f}"
    if best.device.key == current.device.key:
        return (
            f"the same {name} on a {best.gpu_count}-GPU instance costs "
            f"{saving}% less per step than the {current.gpu_count}-GPU machine it ran on"
        )
    return f"{_a(best)} costs {saving}% less per step {_speed(best, current)}"


def recommendation(
    job: ObservedJob, projections: Sequence[Projection], *, verdict: Verdict | None = None
) -> str:
    """rent_advice with what the job did that leads to it ("the GPU is idle 39% of the time:
    ..."); advice to keep the GPU carries its own reason."""
    advice = rent_advice(job, projections, verdict=verdict)
    if advice.startswith("keep the "):
        return advice
    current = next(projection for projection in projections if projection.is_current)
    return f"{_context(job, current)}: {advice}"


def idle_gpus_priced(finding: str, projections: Sequence[Projection]) -> str:
    """The idle-GPU finding with what the job's GPU costs on an instance of the job's size
    beside the machine it ran on, whichever GPU the recommendation goes on to name."""
    current = next(projection for projection in projections if projection.is_current)
    resized = next(
        (
            projection
            for projection in projections
            if not projection.is_current and projection.device.key == current.device.key
        ),
        None,
    )
    if not finding or resized is None or resized.best_offer is None:
        return finding
    priced = (
        f"{finding}; the {current.device.name} on a {resized.gpu_count}-GPU instance "
        f"({_offer(resized)}) costs ${_expected_cost(resized):.2f} per 1,000 steps"
    )
    if current.best_offer is None:
        return priced
    return (
        f"{priced} against ${_expected_cost(current):.2f} on the {current.gpu_count}-GPU machine "
        f"({_offer(current)})"
    )


def _offer(projection: Projection) -> str:
    offer = projection.best_offer.offer
    return f"{offer.provider} {offer.instance_type}, ${offer.usd_per_hour:.2f}/h"


def _context(job: ObservedJob, current: Projection) -> str:
    # GB as the datasheets and the catalogue count it: binary ("80 GB" of HBM is 80 GiB).
    idle = f"the GPU is idle {job.idle_pct:.0f}% of the time"
    if job.peak_memory_bytes is None:
        return idle
    peak_gb = job.peak_memory_bytes / _GIB
    return f"{idle} and peaks at {peak_gb:.1f} GB of {current.device.memory_gib:g} GB"


def _cost(projection: Projection, end: str) -> float:
    """The cheapest offer's cost per 1,000 steps at one end of the range."""
    best = projection.best_offer
    return getattr(best.usd_per_1000_steps, end) if best else float("inf")


def _expected_cost(projection: Projection) -> float:
    return _cost(projection, "expected")


def _speed(candidate: Projection, current: Projection) -> str:
    if candidate.step_s is None or current.step_s is None:
        return "at an unknown speed"
    ratio = candidate.step_s.expected / current.step_s.expected
    if abs(ratio - 1) <= SAME_SPEED:
        return "at about the same speed"
    if ratio < 1:
        return f"and runs {1 / ratio:.1f}x faster"
    return f"but each step takes {ratio:.1f}x as long"


def _instance(projection: Projection, current: Projection) -> str:
    """ " on a 1-GPU instance" for the current GPU at another size; empty for other GPUs."""
    if projection.device.key != current.device.key:
        return ""
    return f" on a {projection.gpu_count}-GPU instance"


def _a(projection: Projection) -> str:
    name = projection.device.name
    return f"{'an' if name[:1].upper() in _AN_LETTERS else 'a'} {name}"
