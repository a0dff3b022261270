"""Training time: model FLOPs (6·N·D) plus recomputation, over dense peak × the architecture's
utilisation band, plus tensor parallelism's all-reduces.

MFU is reported on 6·N·D, as published runs report it; recomputing activations is extra work
the hardware does on top (Korthikanti et al. 2022, https://arxiv.org/abs/2205.05198: MFU
counts the model's FLOPs, HFU the hardware's).
"""

from dataclasses import dataclass

from advisor.domain.devices import NODE_FABRIC_GPUS, Device
from advisor.domain.ranges import Range
from advisor.domain.sizing.architecture import ModelArchitecture
from advisor.domain.sizing.layout import Parallelism
from advisor.domain.sizing.precision import Dtype
from advisor.domain.sizing.speed.cluster import (
    UNSIZED_NETWORK,
    Cluster,
    ScaleOut,
    apply_scale_out,
    collective_bytes_per_node,
    moe_cross_node_bytes_per_gpu,
    scale_out,
)
from advisor.domain.sizing.speed.communication import (
    ALLREDUCES_PER_LAYER_BACKWARD,
    ALLREDUCES_PER_LAYER_FORWARD,
    allreduce_seconds,
)
from advisor.domain.sizing.speed.efficiency import compute_peak_tflops, training_utilization
from advisor.domain.sizing.speed.moe import (
    A2A_PER_MOE_LAYER_BACKWARD,
    A2A_PER_MOE_LAYER_FORWARD,
    MoeTraining,
    is_moe,
    moe_training,
    routed_experts,
)
from advisor.domain.sizing.stacks import Checkpointing
from advisor.domain.sizing.training_memory import trainable_params
from advisor.domain.sizing.workload import Task, Workload

# Data parallelism over PCIe (cards without a node-wide fabric) overlaps less of its gradient
# all-reduce with the backward pass. Beyond one node the collectives cross the cluster network
# (cluster.py).
DATA_PARALLEL_EFFICIENCY_PCIE = 0.80
GRADIENT_BYTES = 2  # 16-bit activations and their gradients cross the tensor-parallel group
INFINITE = Range(float("inf"), float("inf"), float("inf"))


@dataclass(frozen=True)
class TrainingTime:
    hours: Range
    flops: float  # model FLOPs, what MFU counts
    flops_rule: str
    hardware_flops: float  # model FLOPs plus the attention core and recomputation
    recompute_rule: str
    mfu: Range  # model FLOPs over time × peak, as a published run would report it
    utilization: Range  # the band the hardware FLOPs were run at
    utilization_source: str
    compute_note: str
    scale_out: ScaleOut | None = None  # across nodes: what the cluster added


def training_flops(workload: Workload) -> tuple[float, str]:
    """Model FLOPs: 6·N·D for full training (forward 2, backward 4); LoRA skips the weight
    gradients: 4·N·D. N is the active parameter count (a MoE routes each token through a few
    experts)."""
    n = workload.architecture.params_active
    per_token = 4 if workload.task.adapters else 6
    return per_token * n * workload.tokens_to_train, f"{per_token}·N·D"


def attention_flops(workload: Workload) -> float:
    """The attention core's FLOPs, which 6·N·D leaves out (its products have no weights): QK^T
    and the weighted sum (attention_flops_per_pair: 4·h with queries and values as wide as the
    hidden state) over s pairs per token and layer, half under a causal mask, three times over
    for the forward and backward passes: 6·L·s·h·D in PaLM's MFU accounting (Chowdhery et al.
    2022, https://arxiv.org/abs/2204.02311, appendix B, with the causal half)."""
    return 3 * _attention_forward_flops_per_token(workload) * workload.tokens_to_train


def _attention_forward_flops_per_token(workload: Workload) -> float:
    """One forward pass of the attention core, per token: every layer's pairs, s/2 per query
    under a causal mask, s in an encoder."""
    arch = workload.architecture
    pairs_per_query = workload.context_tokens * (1.0 if arch.encoder_only else 0.5)
    return arch.attention_flops_per_pair * arch.num_layers * pairs_per_query


def recompute_flops(workload: Workload) -> tuple[float, str]:
    """What recomputation adds (Korthikanti et al. 2022): full checkpointing runs each layer's
    forward again, 2·N·D; selective recomputes only the attention core (QK^T and the weighted
    sum, 4·s·h per token and layer, half of it under a causal mask: 2·L·s·h·D), or, in a stack
    whose selective policy redoes a share of the matmuls, that share of the forward."""
    arch = workload.architecture
    tokens = workload.tokens_to_train
    mode = workload.checkpointing
    if mode == Checkpointing.FULL:
        forward = 2 * arch.params_active * tokens + attention_flops(workload) / 3
        return forward, "+ 2·N·D and the attention's forward recomputed (full checkpointing)"
    matmul_share = workload.stack.selective_recomputed_matmul_share
    if mode == Checkpointing.SELECTIVE and matmul_share:
        rule = f"+ {2 * matmul_share:g}·N·D recomputed (selective: every second matmul)"
        return 2 * matmul_share * arch.params_active * tokens, rule
    if mode == Checkpointing.SELECTIVE:
        rule = "+ 2·L·s·h·D recomputed (selective checkpointing: the attention core)"
        return _attention_forward_flops_per_token(workload) * tokens, rule
    return 0.0, "no recomputation (no checkpointing)"


def _tensor_parallel_seconds(workload: Workload, device: Device, parallelism: Parallelism) -> Range:
    """Wall time of the tensor-parallel all-reduces: per micro-batch and layer two in the
    forward pass and two in the backward pass (two more when full checkpointing reruns the
    forward), each of the micro-batch's hidden states, not overlapped with compute."""
    tp = parallelism.tensor_parallel
    if tp == 1:
        return Range(0.0, 0.0, 0.0)
    arch = workload.architecture
    per_layer = ALLREDUCES_PER_LAYER_FORWARD + ALLREDUCES_PER_LAYER_BACKWARD
    if workload.checkpointing == Checkpointing.FULL:
        per_layer += ALLREDUCES_PER_LAYER_FORWARD
    micro_batch_tokens = workload.batch_size * workload.context_tokens
    one = allreduce_seconds(device, tp, micro_batch_tokens * arch.hidden_size * GRADIENT_BYTES)
    micro_batches = workload.tokens_to_train / (micro_batch_tokens * parallelism.data_parallel)
    return one.scaled(per_layer * arch.num_layers * micro_batches)


def _recomputed_matmul_flops(workload: Workload) -> float:
    """The weight matmuls recomputation runs again (recompute_flops without the attention
    core): the whole forward under full checkpointing, a stack's selective share, or none."""
    arch = workload.architecture
    tokens = workload.tokens_to_train
    if workload.checkpointing == Checkpointing.FULL:
        return 2 * arch.params_active * tokens
    share = workload.stack.selective_recomputed_matmul_share
    if workload.checkpointing == Checkpointing.SELECTIVE and share:
        return 2 * share * arch.params_active * tokens
    return 0.0


def _moe_training(
    workload: Workload,
    device: Device,
    parallelism: Parallelism,
    model_flops: float,
    utilization: Range,
) -> MoeTraining | None:
    """A MoE's routed experts and all-to-alls (moe.py); None for a dense model."""
    arch = workload.architecture
    if not is_moe(arch):
        return None
    return moe_training(
        arch,
        device,
        matmul_flops=model_flops + _recomputed_matmul_flops(workload),
        tokens_to_train=workload.tokens_to_train,
        micro_batch_tokens=workload.batch_size * workload.context_tokens,
        data_parallel=parallelism.data_parallel,
        layout_expert_parallel=parallelism.expert_parallel,
        pipeline_parallel=parallelism.pipeline_parallel,
        gpu_count=parallelism.gpu_count,
        sixteen_bit_peak_tflops=device.bf16_tflops or device.fp16_tflops or 0.0,
        utilization=utilization,
        recomputed_forward=workload.checkpointing == Checkpointing.FULL,
    )


def _node_ranks(parallelism: Parallelism, node_gpus: int) -> int:
    """Data-parallel ranks in one node: expert parallelism counts ranks, each a tensor-parallel
    group of GPUs."""
    return max(1, node_gpus // parallelism.tensor_parallel)


def _expert_parallel(arch: ModelArchitecture, parallelism: Parallelism, node_ranks: int) -> int:
    """The data-parallel ranks a MoE's experts spread over: the layout's expert parallelism; a
    layout without one replicates or shards its experts by ZeRO, and dispatches only inside the
    node (as moe.py prices it), never across nodes."""
    if parallelism.expert_parallel > 1:
        return parallelism.expert_parallel
    return min(routed_experts(arch), parallelism.data_parallel, node_ranks)


def _experts_elsewhere(workload: Workload, parallelism: Parallelism, node_ranks: int) -> float:
    """Under expert parallelism past a node, the routed-expert parameters a node does not
    hold (its ranks hold node_ranks / EP of them): their gradients are reduced by other nodes."""
    ep = parallelism.expert_parallel
    if ep <= node_ranks or workload.task.adapters:
        return 0.0
    return workload.architecture.params_routed_experts * (1 - node_ranks / ep)


def _scale_out(
    workload: Workload, parallelism: Parallelism, cluster: Cluster, compute: Range
) -> ScaleOut:
    """The cluster's terms for this run (cluster.py): its collectives per micro-batch, the
    pipeline's bubble, a MoE's all-to-all beyond the node, the weak-scaling loss."""
    arch = workload.architecture
    micro_batch_tokens = workload.batch_size * workload.context_tokens
    tokens_per_gpu = workload.tokens_to_train / parallelism.data_parallel
    nodes = cluster.nodes(parallelism.gpu_count)
    node_ranks = _node_ranks(parallelism, cluster.node_gpus)
    moe_bytes = 0.0
    if is_moe(arch):
        forward = A2A_PER_MOE_LAYER_FORWARD * (
            2 if workload.checkpointing == Checkpointing.FULL else 1
        )
        moe_bytes = moe_cross_node_bytes_per_gpu(
            experts=routed_experts(arch),
            experts_per_token=arch.experts_per_token,
            hidden_size=arch.hidden_size,
            moe_layers=arch.moe_layers / parallelism.pipeline_parallel,
            calls_per_layer=forward + A2A_PER_MOE_LAYER_BACKWARD,
            tokens_per_gpu=tokens_per_gpu,
            node_gpus=node_ranks,
            expert_parallel=_expert_parallel(arch, parallelism, node_ranks),
        )
    return scale_out(
        cluster=cluster,
        gpu_count=parallelism.gpu_count,
        pipeline_parallel=parallelism.pipeline_parallel,
        micro_batches=tokens_per_gpu / micro_batch_tokens,
        compute_seconds=compute,
        bytes_per_node=collective_bytes_per_node(
            params_total=arch.params_total,
            params_trained=trainable_params(workload)
            - _experts_elsewhere(workload, parallelism, node_ranks),
            zero_stage=parallelism.zero_stage,
            pipeline_parallel=parallelism.pipeline_parallel,
            nodes=nodes,
        ),
        moe_cross_node_bytes_per_gpu=moe_bytes,
    )


def training_time(
    workload: Workload,
    device: Device,
    parallelism: Parallelism,
    cluster: Cluster | None = None,
) -> TrainingTime:
    """The run's time on `parallelism`; across nodes (more GPUs than `cluster`'s node, or
    than NODE_FABRIC_GPUS without one) with the cluster's terms (cluster.py). Without a
    cluster, the nodes' network is unknown: its collectives are not sized, the bubble and the
    weak-scaling loss are."""
    assert workload.task is not Task.INFERENCE
    dtype = workload.weight_dtype if workload.task is not Task.QLORA else Dtype.BF16
    peak, note = compute_peak_tflops(device, dtype)
    flops, rule = training_flops(workload)
    extra, recompute_rule = recompute_flops(workload)
    hardware_flops = flops + attention_flops(workload) + extra
    utilization, source = training_utilization(device)
    if not peak:
        return TrainingTime(
            INFINITE, flops, rule, hardware_flops, recompute_rule, Range(0, 0, 0),
            utilization, source, note,
        )  # fmt: skip
    efficiency = 1.0
    pcie_cards = device.fast_link_gpus < NODE_FABRIC_GPUS
    if (
        parallelism.data_parallel > 1
        and pcie_cards
        and parallelism.gpu_count > device.fast_link_gpus
    ):
        efficiency = DATA_PARALLEL_EFFICIENCY_PCIE
    peak_flops = peak * 1e12 * parallelism.gpu_count
    moe = _moe_training(workload, device, parallelism, flops, utilization)
    if moe is None:
        compute = utilization.scaled(peak_flops * efficiency).inverted(hardware_flops)
    else:
        # The routed experts at their own rate (moe.py), the rest at the dense band.
        compute = (
            utilization.scaled(peak_flops * efficiency)
            .inverted(hardware_flops - moe.expert_flops)
            .plus(moe.expert_seconds.scaled(1 / efficiency))
            .plus(moe.all_to_all_seconds)
        )
        recompute_rule = f"{recompute_rule}; {moe.rule}"
    seconds = compute.plus(_tensor_parallel_seconds(workload, device, parallelism))
    across = cluster or Cluster(NODE_FABRIC_GPUS, UNSIZED_NETWORK)
    scale = None
    if parallelism.gpu_count > across.node_gpus:
        scale = _scale_out(workload, parallelism, across, seconds)
        seconds = apply_scale_out(seconds, scale)
    mfu = seconds.inverted(flops / peak_flops)
    return TrainingTime(
        seconds.scaled(1 / 3600), flops, rule, hardware_flops, recompute_rule, mfu,
        utilization, source, note, scale,
    )  # fmt: skip
