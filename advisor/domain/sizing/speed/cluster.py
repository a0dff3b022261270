"""Training across nodes: what a cluster of instances adds to a run's time beyond one node.

Inside a node the GPUs talk over NVLink (communication.py); across nodes over the instances'
network (catalog/data/instance_networks.csv: EFA, InfiniBand, RoCE, or an assumed Ethernet).
The layout keeps tensor parallelism inside a node, splits the layers into pipeline stages
across nodes only where the model does not fit otherwise, and runs data parallelism (with the
workload's ZeRO / FSDP sharding) over the rest. Per micro-batch that costs:

- the data-parallel collectives across nodes, hierarchical: reduced inside the node over
  NVLink, then each node's share over its NICs. A ring's bytes through one node's NICs are
  (n-1)/n of the node's shard of the model for a reduce-scatter or an all-gather: gradients
  all-reduced (two of them), or under ZeRO-3 / FSDP the weights gathered twice (forward and
  backward) and the gradients reduce-scattered once. They overlap with compute; what does not
  fit behind it is on the critical path;
- the pipeline bubble, (p-1)/(m+p-1) of the step for p stages and m micro-batches
  (Narayanan et al. 2021, https://arxiv.org/abs/2104.04473, section 2.2);
- a MoE's expert all-to-all where its experts spread beyond one node: the share of each token's
  dispatch and combine to GPUs on other nodes crosses the NIC;
- a weak-scaling loss per doubling of the node count (stragglers, synchronisation, the
  network's congestion), from published runs that scale out on fast fabrics.
"""

import math
from dataclasses import dataclass

from advisor.domain.provenance import fitted
from advisor.domain.ranges import Range
from catalog.domain.networks import InstanceNetwork

# What NCCL's collectives reach of the NICs' line rate across nodes: EFA v1's 400 Gbps gives
# 340 Gbps in all_reduce tests (https://github.com/stas00/ml-engineering/blob/
# 0030e63f5275afee38233676690ce10478647cca/network/README.md, "EFA").
INTER_NODE_BUS_FRACTION = 0.85
fitted(
    "INTER_NODE_BUS_FRACTION",
    fitted_on=(),
    source="ml-engineering's network chapter: EFA v1 0.4 Tbps, effective 340 Gbps in all_reduce",
)
# The share of a micro-batch's compute its data-parallel collectives can hide behind (DDP's
# bucketed all-reduce during the backward pass, FSDP's prefetched all-gathers): all of it at
# the fast end, half at the slow end.
COMM_OVERLAP_SHARE = Range(0.5, 0.8, 1.0)
fitted(
    "COMM_OVERLAP_SHARE",
    fitted_on=(),
    source="an assumption, not a measurement: PyTorch DDP and FSDP overlap their collectives "
    "with the backward (and FSDP's prefetch with the forward) pass; how much of a step they "
    "hide is not published per run",
)
# Micro-batches per optimizer step per pipeline stage: m = 4 p gives a bubble of (p-1)/(5p-1),
# under 20% at any depth, as Megatron-LM's runs keep it by choosing the global batch.
PIPELINE_MICROBATCHES_PER_STAGE = 4
fitted(
    "PIPELINE_MICROBATCHES_PER_STAGE",
    fitted_on=(),
    source="an assumption: a global batch of at least 4 micro-batches per pipeline stage "
    "(Narayanan et al. 2021 keep the bubble small the same way)",
)
# The weak-scaling loss per doubling of the node count on a fast fabric, beyond the collectives
# above. From LLM Foundry's MPT-1B on H100 (https://github.com/mosaicml/llm-foundry/blob/
# 061f2c7ce64e655100286584a7629e2a09f827ba/scripts/train/benchmarking/README.md, "H100 80GB
# BF16", 1b at 2048 tokens): 45,455 tokens/s/GPU on 8 GPUs, 44,402 on 64, 2.3% over three
# doublings, whose collectives this model hides behind compute: 0.8% per doubling. One figure,
# not a band: the run's spread is the utilisation band's. Llama 3 405B
# (https://arxiv.org/abs/2407.21783, Table 4) loses 7% from 8,192 to 16,384 GPUs with the batch
# per data-parallel group halved (its pipeline bubble grows), more than this: large clusters
# may do worse (cluster_runs.json lists it as excluded).
SCALE_OUT_LOSS_PER_DOUBLING = 0.008
fitted(
    "SCALE_OUT_LOSS_PER_DOUBLING",
    fitted_on=(
        "llm-foundry-mpt-1b-2048-h100-sxm-8gpu",
        "llm-foundry-mpt-1b-2048-h100-sxm-64gpu",
    ),
)
A2A_ACTIVATION_BYTES = 2  # bf16 hidden states, as moe.py dispatches them
# A candidate with no offer has no instance, so no known network: its collectives across
# nodes are not sized (an infinitely fast network), the bubble and weak-scaling loss are.
UNSIZED_NETWORK = InstanceNetwork(
    "no offer, so no instance network: collectives across nodes not sized", math.inf, None
)


@dataclass(frozen=True)
class Cluster:
    """Where a candidate's GPUs are: how many per node, and the network between nodes."""

    node_gpus: int
    network: InstanceNetwork

    def nodes(self, gpu_count: int) -> int:
        return max(1, math.ceil(gpu_count / self.node_gpus))


@dataclass(frozen=True)
class ScaleOut:
    """What running across `nodes` nodes added to a run, and what it assumed."""

    nodes: int
    collective_seconds: Range  # the data-parallel collectives over the network, whole run
    exposed_seconds: Range  # the part of them compute did not hide
    all_to_all_seconds: Range  # a MoE's dispatch and combine across nodes, whole run
    bubble_fraction: float  # of the pipelined step
    efficiency: float  # the weak-scaling factor the time was divided by
    network: InstanceNetwork
    node_gpus: int

    def assumptions(self) -> list[str]:
        """What this candidate's multi-node time assumed, in words."""
        net = self.network
        if math.isinf(net.network_gbps):
            where = net.fabric
        elif net.assumed:
            where = f"{net.fabric} per node (the instance lists no fabric)"
        else:
            where = f"{net.fabric} at {net.network_gbps:,.0f} Gbps per node ({net.source_url})"

        notes = [
            f"{self.nodes} nodes of {self.node_gpus} GPUs over {where}; collectives reach "
            f"{INTER_NODE_BUS_FRACTION:.0%} of it",
            f"data-parallel collectives {self.collective_seconds.expected / 3600:,.1f} h over "
            f"the run, {self.exposed_seconds.expected / 3600:,.1f} h of it not hidden behind "
            f"compute (overlap {COMM_OVERLAP_SHARE.low:.0%}-{COMM_OVERLAP_SHARE.high:.0%})",
            f"scale-out efficiency {self.efficiency:.1%} ({SCALE_OUT_LOSS_PER_DOUBLING:.1%} lost "
            "per doubling of the nodes, from published weak scaling)",
        ]
        if self.bubble_fraction:
            notes.append(
                f"pipeline bubble {self.bubble_fraction:.1%} of each step "
                f"({PIPELINE_MICROBATCHES_PER_STAGE} micro-batches per stage)"
            )
        if self.all_to_all_seconds.expected:
            notes.append(
                f"MoE all-to-all across nodes {self.all_to_all_seconds.expected / 3600:,.1f} h"
            )
        return notes


def bubble_fraction(pipeline_parallel: int) -> float:
    """The pipeline's idle share of a step at PIPELINE_MICROBATCHES_PER_STAGE per stage."""
    if pipeline_parallel <= 1:
        return 0.0
    micro_batches = PIPELINE_MICROBATCHES_PER_STAGE * pipeline_parallel
    return (pipeline_parallel - 1) / (micro_batches + pipeline_parallel - 1)


def collective_bytes_per_node(
    params_total: float,
    params_trained: float,
    zero_stage: int,
    pipeline_parallel: int,
    nodes: int,
    gradient_bytes: int = 2,
) -> float:
    """Bytes one node's NICs carry per micro-batch for the data-parallel collectives: its
    pipeline stage's share of the model, (n-1)/n of it per reduce-scatter or all-gather, n the
    nodes holding that stage. Pipelined, the gradients are reduced once per optimizer step, a
    step of PIPELINE_MICROBATCHES_PER_STAGE micro-batches per stage: their share of it."""
    grads = params_trained * gradient_bytes
    # ZeRO-3: the 16-bit weights (the frozen base included) gathered before the forward pass
    # and again before the backward pass, the gradients reduce-scattered once. Below it, an
    # all-reduce of the gradients: a reduce-scatter and an all-gather.
    volume = 2 * params_total * gradient_bytes + grads if zero_stage >= 3 else 2 * grads
    ring = max(1, nodes // pipeline_parallel)
    per_step = volume * (ring - 1) / ring / pipeline_parallel
    if pipeline_parallel > 1:
        return per_step / (PIPELINE_MICROBATCHES_PER_STAGE * pipeline_parallel)
    return per_step


def scale_out(
    *,
    cluster: Cluster,
    gpu_count: int,
    pipeline_parallel: int,
    micro_batches: float,
    compute_seconds: Range,
    bytes_per_node: float,
    moe_cross_node_bytes_per_gpu: float = 0.0,
) -> ScaleOut:
    """What `gpu_count` GPUs over `cluster` add to a run whose compute (one node's way of
    running it, per GPU) takes `compute_seconds` over `micro_batches` micro-batches per GPU."""
    nodes = cluster.nodes(gpu_count)
    network_gb_s = cluster.network.network_gb_s * INTER_NODE_BUS_FRACTION
    per_micro_batch = bytes_per_node / (network_gb_s * 1e9)
    collective = Range(per_micro_batch, per_micro_batch, per_micro_batch).scaled(micro_batches)
    # Per micro-batch: what compute does not hide (the fast end hides the most).
    overlap = COMM_OVERLAP_SHARE
    exposed = Range(
        max(0.0, per_micro_batch - overlap.high * compute_seconds.low / micro_batches),
        max(0.0, per_micro_batch - overlap.expected * compute_seconds.expected / micro_batches),
        max(0.0, per_micro_batch - overlap.low * compute_seconds.high / micro_batches),
    ).scaled(micro_batches)
    per_gpu_nic_gb_s = network_gb_s / cluster.node_gpus
    a2a = moe_cross_node_bytes_per_gpu / (per_gpu_nic_gb_s * 1e9) if nodes > 1 else 0.0
    efficiency = (1 - SCALE_OUT_LOSS_PER_DOUBLING) ** math.log2(nodes)
    return ScaleOut(
        nodes=nodes,
        collective_seconds=collective,
        exposed_seconds=exposed,
        all_to_all_seconds=Range(a2a, a2a, a2a),
        bubble_fraction=bubble_fraction(pipeline_parallel),
        efficiency=efficiency,
        network=cluster.network,
        node_gpus=cluster.node_gpus,
    )


def apply_scale_out(seconds: Range, scale: ScaleOut) -> Range:
    """The run's time across nodes: its one-node time plus what compute did not hide and the
    cross-node all-to-all, stretched by the pipeline bubble, over the weak-scaling efficiency."""
    busy = seconds.plus(scale.exposed_seconds).plus(scale.all_to_all_seconds)
    return busy.scaled(1 / ((1 - scale.bubble_fraction) * scale.efficiency))


def moe_cross_node_bytes_per_gpu(
    *,
    experts: int,
    experts_per_token: int,
    hidden_size: int,
    moe_layers: float,
    calls_per_layer: int,
    tokens_per_gpu: float,
    node_gpus: int,
    expert_parallel: int,
) -> float:
    """Bytes a GPU's dispatch and combine send to other nodes over the run: each token's hidden
    state to its top-k experts, the share of them on GPUs beyond its node."""
    if expert_parallel <= node_gpus or experts <= node_gpus:
        return 0.0
    remote = (expert_parallel - node_gpus) / expert_parallel
    per_call = tokens_per_gpu * experts_per_token * hidden_size * A2A_ACTIVATION_BYTES * remote
    return per_call * calls_per_layer * moe_layers
