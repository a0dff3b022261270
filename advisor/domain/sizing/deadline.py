"""A training deadline (`train_days`): per GPU type and provider, the smallest cluster whose
expected time finishes within it, with its time and its cost; or, where none of the counts
sized does, the fastest it gets and that none fits.

Each provider is priced on its own instances and their network (a provider whose instances
have a slower fabric may need more GPUs for the same deadline), over the layouts the answer's
candidates chose: the memory does not depend on who rents the GPUs.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from advisor.domain.devices import Device, Offer
from advisor.domain.ranges import Range
from advisor.domain.sizing.candidates import Candidate
from advisor.domain.sizing.cluster_layout import cluster_offers, single_node
from advisor.domain.sizing.rental import offer_choose
from advisor.domain.sizing.speed import training_time
from advisor.domain.sizing.speed.cluster import Cluster
from advisor.domain.sizing.workload import Workload

HOURS_PER_DAY = 24


@dataclass(frozen=True)
class DeadlinePick:
    device: Device
    provider: str
    fits: bool  # some count finishes within the deadline
    gpu_count: int  # the smallest that does; else the fastest sized
    days: Range
    usd_per_job: Range
    offer: Offer
    instances: int

    def sentence(self, train_days: float) -> str:
        what = f"{self.gpu_count:,}x {self.device.name} on {self.offer.provider_name}"
        timing = f"{self.days.expected:,.1f} days for ${self.usd_per_job.expected:,.0f}"
        if self.fits:
            return f"{what}: {timing}, within {train_days:g} days"
        return f"none within {train_days:g} days: the fastest sized is {what}, {timing}"


def _provider_run(
    workload: Workload, candidate: Candidate, offers: Sequence[Offer]
) -> tuple[Offer, int, Range, Range] | None:
    """The candidate's layout priced on one provider's offers: the offer, its instances, the
    days and the dollars; None when the provider has no instance that makes the count."""
    count, parallelism = candidate.gpu_count, candidate.parallelism
    rental, pricing = workload.rental, workload.pricing_model
    if single_node(count):
        offer = offer_choose(offers, gpu_count=count, rental=rental, pricing_model=pricing)
        if offer is None:
            return None
        hours = candidate.training.hours
        return offer, 1, hours.scaled(1 / HOURS_PER_DAY), hours.scaled(offer.usd_per_hour)
    runs = []
    for offer in cluster_offers(
        offers,
        gpu_count=count,
        tensor_parallel=parallelism.tensor_parallel,
        rental=rental,
        pricing_model=pricing,
    ):
        timing = training_time(
            workload, candidate.device, parallelism, Cluster(offer.gpu_count, offer.network)
        )
        instances = count // offer.gpu_count
        usd = timing.hours.scaled(offer.usd_per_hour * instances)
        runs.append((timing.hours.expected, offer, instances, timing.hours, usd))
    if not runs:
        return None
    _, offer, instances, hours, usd = min(runs, key=lambda run: (run[0], run[4].expected))
    return offer, instances, hours.scaled(1 / HOURS_PER_DAY), usd


def deadline_picks(
    workload: Workload,
    candidates: Sequence[Candidate],
    offers_by_device: Mapping[str, Sequence[Offer]],
) -> list[DeadlinePick]:
    """Per GPU type and provider with a priced run: the smallest count that finishes within
    `workload.train_days`, or the fastest when none does; those that fit first, cheapest
    first, then the others, fastest first."""
    if workload.train_days is None:
        return []
    running: dict[str, list[Candidate]] = {}
    for candidate in candidates:
        if candidate.fits and candidate.training is not None:
            running.setdefault(candidate.device.key, []).append(candidate)
    picks = []
    for key, options in running.items():
        offers = offers_by_device.get(key, ())
        for provider in sorted({offer.provider for offer in offers}):
            mine = [offer for offer in offers if offer.provider == provider]
            pick = _smallest_within(workload, sorted(options, key=lambda c: c.gpu_count), mine)
            if pick is not None:
                picks.append(pick)
    # What fits, cheapest first; what does not, fastest first (the nearest to the deadline).
    return sorted(
        picks,
        key=lambda p: (
            not p.fits,
            p.usd_per_job.expected if p.fits else p.days.expected,
            p.gpu_count,
        ),
    )


def _smallest_within(
    workload: Workload, options: Sequence[Candidate], offers: Sequence[Offer]
) -> DeadlinePick | None:
    fastest = None
    for candidate in options:
        run = _provider_run(workload, candidate, offers)
        if run is None:
            continue
        offer, instances, days, usd = run
        pick = DeadlinePick(
            candidate.device, offer.provider, False, candidate.gpu_count, days, usd, offer,
            instances,
        )  # fmt: skip
        if days.expected <= workload.train_days:
            return replace(pick, fits=True)
        if fastest is None or days.expected < fastest.days.expected:
            fastest = pick
    return fastest
