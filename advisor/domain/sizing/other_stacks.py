"""Where the workload's stack does not run, another stack may (compatibility/moves.py): each
GPU type the stack was rejected on, the moves that run the work there, and their candidates,
sized under the modelled stack whose memory rules stand in."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from advisor.domain.compatibility.moves import StackMove, moves_for
from advisor.domain.devices import Device, Offer
from advisor.domain.portability.rule import RE_TUNE
from advisor.domain.sizing.candidates import Candidate, Rejection, rank_candidates
from advisor.domain.sizing.requirements import workload_requirements
from advisor.domain.sizing.workload import Workload


@dataclass(frozen=True)
class OtherStack:
    """A GPU type the workload's stack does not run on, where another stack does: the move,
    and that stack's best candidate there (None when the workload needs what it lacks)."""

    device: Device
    move: StackMove
    best: Candidate | None
    lacks: tuple[str, ...]


def other_stacks_for(
    workload: Workload,
    devices: Sequence[Device],
    offers_by_device: Mapping[str, Sequence[Offer]],
    candidates: Sequence[Candidate],
) -> tuple[list[OtherStack], list[Candidate]]:
    """For each GPU type rejected because the stack (or a feature) does not run there, the
    other stacks that do run the work; and their candidates, sized under the stack whose
    memory rules stand in (`StackMove.sized_as`)."""
    blocked = {c.device.key: c.device for c in candidates if c.rejection == Rejection.STACK}
    needs = {r.subject for r in workload_requirements(workload) if r.needed}
    listed: list[OtherStack] = []
    sized: list[Candidate] = []
    moves = dict.fromkeys(m for d in blocked.values() for m in moves_for(d.platform, workload.task))
    for move in moves:
        on = [d for d in blocked.values() if d.platform in move.platforms]
        lacks = tuple(sorted(needs & move.lacks))
        ranked = []
        if not lacks:
            ranked = rank_candidates(
                workload.with_changes(stack_name=move.sized_as), on, offers_by_device, move=move
            )
            sized.extend(ranked)
        for device in on:
            best = next((c for c in ranked if c.device.key == device.key and c.fits), None)
            listed.append(OtherStack(device, move, best, lacks))
    # Per GPU type: the stack's own plugin or fork first (vLLM's for vLLM), re-tunes before
    # rewrites.
    listed.sort(
        key=lambda o: (
            o.device.name,
            o.move.sized_as != workload.stack_name,
            o.move.move != RE_TUNE,
            o.move.stack,
        )
    )
    return listed, sized
