"""Training beyond one node: which GPU counts an answer sizes, how a count's GPUs are laid out
across nodes, and which instances a cluster of them is rented as.

Counts: 1, 2, 4 and 8 as always; for training, every power of two from 16 up to the rental's
max_gpus (at most MAX_CLUSTER_GPUS: thirteen counts, whatever the ceiling), plus a count the
request names (`gpu_count`). Layouts across nodes: tensor parallelism stays inside a node,
data parallelism spans the nodes, with the smallest ZeRO stage below 3 that fits, over the
workload's tensor-parallel degree; a MoE's full training then splits its experts by expert
parallelism (expert_parallel_options); then the replicated layouts over the whole node's
tensor-parallel degree; then pipeline stages across nodes
(tensor parallel over the node, ZeRO-1), as few as fit; then fully sharded weights (ZeRO-3 /
FSDP). A request that pins zero_stage states its layout: sized as given. A cluster is
`gpu_count / node` instances of one offer, the device's largest instance (a whole node),
cheapest per network the offers come with.
"""

from collections.abc import Iterable
from typing import TYPE_CHECKING

from advisor.domain.sizing.layout import Parallelism
from advisor.domain.sizing.rental import (
    MAX_GPUS,
    UNCONSTRAINED,
    Rental,
    offer_cheapest,
    pricing_models,
)
from advisor.domain.sizing.workload import Workload
from catalog.domain.freshness import STALE

if TYPE_CHECKING:  # devices.py reads sizing modules that read this one
    from advisor.domain.devices import Offer

SINGLE_NODE_COUNTS = (1, 2, 4, 8)
NODE_GPUS = 8  # the GPUs a node of the common instances holds; tensor parallelism stays inside


def candidate_counts(workload: Workload) -> list[int]:
    """The GPU counts an answer sizes, smallest first."""
    ceiling = workload.rental.max_gpus
    counts = {count for count in SINGLE_NODE_COUNTS if count <= ceiling}
    if workload.task.trains:
        count = NODE_GPUS * 2
        while count <= ceiling:
            counts.add(count)
            count *= 2
    if workload.gpu_count:
        counts.add(workload.gpu_count)
    return sorted(counts)


def multi_node_options(workload: Workload, count: int) -> list[Parallelism]:
    """Training layouts of `count` GPUs across nodes, in the order they are tried: the first
    whose memory fits is the candidate's."""
    tp = min(workload.tensor_parallel, NODE_GPUS)
    if workload.zero_stage is not None:
        # A pinned stage is a stated layout: sized as given, as inside one node.
        return [] if count % tp else [Parallelism(count, tp, workload.zero_stage)]
    heads = workload.architecture.num_attention_heads
    degrees = [d for d in dict.fromkeys((tp, NODE_GPUS)) if not count % d and not heads % d]
    # Replicated weights first (ZeRO 0-2, tensor parallel inside the node); a MoE's experts
    # split by expert parallelism at the requested tensor-parallel degree, with pipeline stages
    # where that is not enough (Megatron's MoE recipes); then pipeline stages over whole nodes
    # with ZeRO-1 (Megatron's 3D layout), then fully sharded weights.
    options = [Parallelism(count, d, stage) for d in degrees[:1] for stage in (0, 1, 2)]
    if degrees and degrees[0] == tp:
        options.extend(expert_parallel_options(workload, count, tp))
    options.extend(Parallelism(count, d, stage) for d in degrees[1:] for stage in (0, 1, 2))
    layers = workload.architecture.num_layers
    pp = 2
    # Pipeline stages across nodes, each at least a whole node, never more than the layers.
    while count % (NODE_GPUS * pp) == 0 and pp <= layers and NODE_GPUS in degrees:
        options.append(Parallelism(count, NODE_GPUS, 1, pipeline_parallel=pp))
        pp *= 2
    options.extend(Parallelism(count, d, 3) for d in degrees)
    return options


def expert_parallel_options(workload: Workload, count: int, tp: int) -> list[Parallelism]:
    """A MoE's full-training layouts with its experts split over EP GPUs (ZeRO-1, Megatron's
    distributed optimizer): the fewest pipeline stages first, then the fewest EP GPUs (the
    least all-to-all traffic), EP a power of two dividing both the data-parallel GPUs and the
    routed experts."""
    experts = workload.architecture.routed_expert_count
    if experts < 2 or workload.task.adapters:
        return []
    layers = workload.architecture.num_layers
    options = []
    pp = 1
    while count % (tp * pp) == 0 and pp <= layers:
        dp = count // (tp * pp)
        ep = 2
        while ep <= min(dp, experts) and dp % ep == 0 and experts % ep == 0:
            options.append(Parallelism(count, tp, 1, pipeline_parallel=pp, expert_parallel=ep))
            ep *= 2
        pp *= 2
    return options


def cluster_offers(
    offers: Iterable["Offer"],
    *,
    gpu_count: int,
    tensor_parallel: int,
    rental: Rental,
    pricing_model: str,
) -> list["Offer"]:
    """The instances `gpu_count` GPUs could be rented as: the device's largest instance among
    those the team may rent that divide the count and hold the tensor-parallel group, the
    cheapest of it per inter-node network (a faster network may be worth its price). Never a
    marketplace's: its hosts are separate machines in separate places, rented one by one, with
    no network between them that a cluster could train over."""
    models = pricing_models(pricing_model)
    constrained = rental != UNCONSTRAINED
    usable = [
        offer
        for offer in offers
        if gpu_count % offer.gpu_count == 0
        and offer.gpu_count >= tensor_parallel
        and offer.pricing_model in models
        and offer.freshness != STALE
        and not offer.is_marketplace
        and (not constrained or rental.allows(offer))
    ]
    if not usable:
        return []
    node = max(offer.gpu_count for offer in usable)
    by_network: dict[tuple[str, float], list[Offer]] = {}
    for offer in usable:
        if offer.gpu_count == node:
            network = offer.network
            by_network.setdefault((network.fabric, network.network_gbps), []).append(offer)
    return [offer for group in by_network.values() if (offer := offer_cheapest(group))]


def single_node(count: int) -> bool:
    """Whether a count is sized as one instance as before (at most MAX_GPUS)."""
    return count <= MAX_GPUS
