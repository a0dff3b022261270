"""A sizing answer: every GPU type and count as a candidate (candidates.py), ranked
(ranking.py); the other stacks where the chosen one does not run (other_stacks.py); and, when
nothing fits, the remedies a team would try (remedies.py)."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from advisor.domain.devices import Device, Offer
from advisor.domain.sizing.assumptions import assumptions
from advisor.domain.sizing.candidates import GPU_COUNTS, Candidate, Rejection, rank_candidates
from advisor.domain.sizing.deadline import DeadlinePick, deadline_picks
from advisor.domain.sizing.other_stacks import OtherStack, other_stacks_for
from advisor.domain.sizing.ranking import rank
from advisor.domain.sizing.remedies import Remedy, remedies_for
from advisor.domain.sizing.workload import Workload

__all__ = [
    "GPU_COUNTS",
    "Candidate",
    "OtherStack",
    "Rejection",
    "Remedy",
    "SizingResult",
    "rank_candidates",
    "recommend",
]


@dataclass
class SizingResult:
    workload: Workload
    candidates: list[Candidate]
    remedies: list[Remedy]
    assumptions: list[str]
    other_stacks: list[OtherStack] = field(default_factory=list)
    # train_days: per GPU type and provider, the smallest cluster within the deadline.
    deadline: list[DeadlinePick] = field(default_factory=list)

    @property
    def fitting(self) -> list[Candidate]:
        return [c for c in self.candidates if c.fits]

    @property
    def best(self) -> Candidate | None:
        """The first that fits; with a deadline (train_days), the cheapest run that finishes
        within it, where one does."""
        within = next((pick for pick in self.deadline if pick.fits), None)
        if within is not None:
            return next(
                c
                for c in self.fitting
                if (c.device.key, c.gpu_count) == (within.device.key, within.gpu_count)
            )
        return self.fitting[0] if self.fitting else None


def recommend(
    workload: Workload,
    devices: Sequence[Device],
    offers_by_device: Mapping[str, Sequence[Offer]],
) -> SizingResult:
    workload.validate()
    candidates = rank_candidates(workload, devices, offers_by_device)
    other_stacks, sized = other_stacks_for(workload, devices, offers_by_device, candidates)
    if workload.other_stacks and sized:
        moved = {c.device.key for c in sized}
        kept = [c for c in candidates if c.device.key not in moved]
        candidates = rank(workload, [*kept, *sized])
    fits = any(c.fits for c in candidates)
    remedies = [] if fits else remedies_for(workload, devices, offers_by_device)
    deadline = deadline_picks(workload, candidates, offers_by_device)
    notes = assumptions(workload)
    lead = next((c for c in candidates if c.fits), None)
    if lead is not None and lead.training is not None and lead.training.scale_out is not None:
        # What the recommended cluster assumed of its network, in the answer's own list.
        notes += [
            f"across nodes ({lead.gpu_count:,} GPUs): {note}"
            for note in lead.training.scale_out.assumptions()
        ]
    return SizingResult(workload, candidates, remedies, notes, other_stacks, deadline)
