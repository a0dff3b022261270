"""Mixture-of-experts speed: what makes a MoE slower than a dense model of its active size.

A MoE routes each token through `experts_per_token` (top-k) of its routed experts. Counting
only its active parameters (6·N·D, or the bytes one decode step reads) makes it look as fast
as a dense model of that size; published runs are slower:

- decode: a step reads every routed expert its tokens touch (more of them the larger the
  batch), and each MoE layer pays a fixed cost for its router, top-k and token alignment
  (Qwen3-30B-A3B runs 48 MoE layers per token, Mixtral 8x7B 32);
- training: the grouped expert GEMMs run at tokens x top_k / experts rows each (load
  imbalance makes the busiest expert the step's), beside the router, the permutation of
  tokens to their experts and back and the activation casts; in the published runs that
  routed-expert work gains nothing from fp8 and runs at a share of the 16-bit peak;
- expert parallelism: each MoE layer sends every token's hidden state to its top_k experts'
  GPUs and back (dispatch and combine), twice more in the backward pass: an all-to-all over
  the node's link whose bytes grow with the tokens.

Each constant names the published rows it was fitted on (the MoE calibration rows, kept
apart from the held-out rows no constant saw).
"""

import math
from dataclasses import dataclass

from advisor.domain.devices import NODE_FABRIC_GPUS, Device
from advisor.domain.provenance import fitted
from advisor.domain.ranges import Range
from advisor.domain.sizing.architecture import ModelArchitecture
from advisor.domain.sizing.speed.communication import (
    ALLREDUCE_BUS_FRACTION_FAST,
    ALLREDUCE_FIXED_S,
    ALLREDUCE_PER_DOUBLING_S,
)

TT_INFERENCE_SERVER_A100 = "https://github.com/tenstorrent/tt-inference-server/issues/340"

# Decode: a fixed time per MoE layer a step runs, beside the bytes of every expert it touches
# over bandwidth (the fused-MoE kernel's router, top-k, token sort and alignment and launches,
# run once per layer whatever the experts: the experts themselves cost their bytes). Fitted on
# one row: vLLM's Qwen3-30B-A3B at batch 1 on an A100 (bf16, 128 in / 128 out) decodes at
# 103.9 tokens/s, 9.62 ms per token (TT_INFERENCE_SERVER_A100, "Performance Benchmark Sweeps
# for Qwen3-30B-A3B on A100", concurrency 1); its 6.7 GB of active weights at the decode
# bandwidth efficiency take 4.7 ms: 4.9 ms over 48 MoE layers is 102 us per layer. The band:
# the row's figure inside at either end of the bandwidth band. The cost was first read as per
# expert touched (12.8 us, the same figure at batch 1 for a top-8 model); TensorRT-LLM 0.21's
# DeepSeek-R1 on 8 H200s decodes at batch 8 only 4.4 ms slower than at batch 1 (a held-out row),
# while its ~57 experts touched per layer instead of 8 would have added 36 ms: what grows with
# the experts is their bytes (3.3 ms of those 4.4), not a fixed cost each. That row chose the
# form, so it is in sample.
DECODE_SECONDS_PER_MOE_LAYER = Range(64e-6, 102.4e-6, 128e-6)
fitted(
    "DECODE_SECONDS_PER_MOE_LAYER",
    # The value from the first row; the form (per layer, not per expert) from the second.
    fitted_on=(
        "tt-inference-server-qwen3-30b-a3b-a100-bs1-decode",
        "trtllm-0.21-deepseek-r1-fp8-h200-tp8-bs8-1600-decode",
    ),
)

# Prefill: a fixed time per routed expert a forward pass touches, per MoE layer, beside the
# active parameters' FLOPs (each expert's grouped-GEMM tiles, its token sort and gather, the
# router), on every tensor-parallel GPU alike: a prompt of a few hundred tokens touches every
# expert of a 128- or 256-expert model, and the published first tokens of large MoEs sit 60-120
# ms above their FLOPs at any length. Fitted on the one source that gives two prompt lengths for
# each of two models, which separates the fixed part from the per-token part: SGLang's cookbook
# on 8 B200s (https://github.com/sgl-project/sgl-cookbook/blob/7b5bd9c05e3d86da5161ac2be9b91c19a34bf49d/
# docs/autoregressive/, Qwen/Qwen3.md and DeepSeek/DeepSeek-R1.md), Qwen3-235B-A22B (94 MoE
# layers x 128 experts) and DeepSeek-R1-0528 (58 x 256) at mean prompts of 610 and 4,194 tokens:
# the published TTFT less the engine's without this term, over the experts touched, is 5.3, 6.5,
# 8.1 and 7.6 us. The band is their range, the expected value their mean.
PREFILL_SECONDS_PER_EXPERT = Range(5.33e-6, 6.87e-6, 8.14e-6)
fitted(
    "PREFILL_SECONDS_PER_EXPERT",
    fitted_on=(
        "sgl-cookbook-qwen3-235b-a22b-b200-tp8-610-first-token",
        "sgl-cookbook-qwen3-235b-a22b-b200-tp8-4194-first-token",
        "sgl-cookbook-deepseek-r1-0528-b200-tp8-610-first-token",
        "sgl-cookbook-deepseek-r1-0528-b200-tp8-4194-first-token",
    ),
)

# Training: the routed experts' FLOPs (grouped GEMMs with their router, permutation and casts)
# run at the 16-bit peak in the architecture's utilisation band, whatever the dtype: fp8 does
# not speed them up in the published runs. Megatron-Bridge's Qwen3-30B-A3B in FP8 on H100
# (10,494 tokens/s/GPU, 25.09 NeMo container,
# https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/fa0315ae2684693a666be9d247adf9baf1e30028/
# docs/performance-summary.md, "DGX-H100") runs slower than NeMo Automodel's BF16 one (12,040,
# https://github.com/NVIDIA-NeMo/Automodel/blob/8d9bfb90e3d8a45d45ab1a9f12ece42b9d1bb6a9/docs/
# performance-summary.md), where the same tables' dense Llama 3 8B gains 2x from FP8. A share
# of 1.0: the choice read the Automodel row, which is therefore in sample.
EXPERT_SHARE_OF_16BIT_RATE = Range(1.0, 1.0, 1.0)
fitted(
    "EXPERT_SHARE_OF_16BIT_RATE", fitted_on=("automodel-qwen3-30b-a3b-h100-8gpu-bf16-throughput",)
)

# Expert parallelism's all-to-all reaches the all-reduce's share of the link (communication.py)
# and pays its latency per call: no constant of its own.
A2A_BUS_FRACTION = ALLREDUCE_BUS_FRACTION_FAST
# Dispatch and combine in the forward pass, their two transposes in the backward pass.
A2A_PER_MOE_LAYER_FORWARD = 2
A2A_PER_MOE_LAYER_BACKWARD = 2
# The share of the all-to-all left on the critical path at the fast end of the range.
A2A_HIDDEN_AT_FAST_END = 0.5
fitted(
    "A2A_HIDDEN_AT_FAST_END",
    fitted_on=(),
    source="an assumption, not a measurement: DeepEP and Megatron's EP overlap hide part of "
    "dispatch and combine behind the expert GEMMs; how much is not published per run",
)
A2A_ACTIVATION_BYTES = 2  # bf16 hidden states (DeepEP and Megatron dispatch in bf16 by default)


def is_moe(arch: ModelArchitecture) -> bool:
    return arch.routed_expert_count > 0


def routed_experts(arch: ModelArchitecture) -> int:
    """Routed experts per MoE layer (1 for a dense model)."""
    return max(1, arch.routed_expert_count)


def routed_params_per_token(arch: ModelArchitecture) -> float:
    """Routed-expert parameters one token goes through (its top_k experts in every MoE layer)."""
    return arch.params_routed_experts * arch.routed_fraction_per_token


def tokens_per_expert(arch: ModelArchitecture, tokens: float) -> float:
    """Rows each expert's GEMM gets from `tokens` tokens, balanced: tokens x top_k / experts."""
    return tokens * arch.experts_per_token / routed_experts(arch)


def experts_touched_per_layer(arch: ModelArchitecture, batch: int) -> float:
    """Expected experts a decode step of `batch` sequences touches in one MoE layer (each token
    picks top_k of E: an expert is idle with probability (1 - k/E)^batch)."""
    idle = (1 - arch.routed_fraction_per_token) ** batch
    return routed_experts(arch) * (1 - idle)


def decode_expert_seconds(arch: ModelArchitecture) -> Range:
    """The fixed cost of one decode step's routed experts: per MoE layer, whatever the batch
    (the experts it touches cost their bytes, counted with the weights read)."""
    if not is_moe(arch):
        return Range(0.0, 0.0, 0.0)
    return DECODE_SECONDS_PER_MOE_LAYER.scaled(arch.moe_layers)


def prefill_expert_seconds(arch: ModelArchitecture, tokens: float) -> Range:
    """The fixed cost of a forward pass over `tokens` tokens' routed experts: per expert they
    touch, per MoE layer (every expert, past a few hundred tokens)."""
    if not is_moe(arch):
        return Range(0.0, 0.0, 0.0)
    return PREFILL_SECONDS_PER_EXPERT.scaled(
        arch.moe_layers * experts_touched_per_layer(arch, round(tokens))
    )


def expert_parallel_degree(arch: ModelArchitecture, device: Device, data_parallel: int) -> int:
    """Training: experts spread over the data-parallel GPUs of one node (the published recipes'
    EP = 8 on 8 GPUs), never more ways than there are experts."""
    if not is_moe(arch):
        return 1
    node = min(data_parallel, device.fast_link_gpus or 1, NODE_FABRIC_GPUS)
    return max(1, min(node, routed_experts(arch)))


def all_to_all_seconds(
    arch: ModelArchitecture, device: Device, expert_parallel: int, tokens: float
) -> Range:
    """One dispatch (or combine) of `tokens` tokens on one GPU over `expert_parallel` GPUs:
    each token's hidden state to its top_k experts, the share on other GPUs over the link,
    plus a collective's latency."""
    if expert_parallel <= 1 or not is_moe(arch):
        return Range(0.0, 0.0, 0.0)
    remote = (expert_parallel - 1) / expert_parallel
    message = tokens * arch.experts_per_token * arch.hidden_size * A2A_ACTIVATION_BYTES * remote
    transfer = message / (device.link_gb_s(expert_parallel) * A2A_BUS_FRACTION * 1e9)
    doublings = math.log2(expert_parallel)
    return Range(
        ALLREDUCE_FIXED_S.low + ALLREDUCE_PER_DOUBLING_S.low * doublings + transfer,
        ALLREDUCE_FIXED_S.expected + ALLREDUCE_PER_DOUBLING_S.expected * doublings + transfer,
        ALLREDUCE_FIXED_S.high + ALLREDUCE_PER_DOUBLING_S.high * doublings + transfer,
    )


@dataclass(frozen=True)
class MoeTraining:
    expert_flops: float  # the routed experts' share of the FLOPs a step executes
    expert_seconds: Range  # those FLOPs at the experts' share of the 16-bit rate
    all_to_all_seconds: Range
    expert_parallel: int
    tokens_per_expert: float  # GEMM rows per expert per micro-batch
    rule: str


def moe_training(
    arch: ModelArchitecture,
    device: Device,
    matmul_flops: float,
    tokens_to_train: float,
    micro_batch_tokens: float,
    data_parallel: int,
    layout_expert_parallel: int,
    pipeline_parallel: int,
    gpu_count: int,
    sixteen_bit_peak_tflops: float,
    utilization: Range,
    recomputed_forward: bool,
) -> MoeTraining | None:
    """The routed experts' time in a training run: their share of the matmul FLOPs at the
    16-bit peak x the utilisation band x EXPERT_SHARE_OF_16BIT_RATE, plus expert parallelism's
    all-to-alls. `matmul_flops`: the weight matmuls a step executes (model FLOPs plus any
    recomputed forward); the caller takes the experts' share out of its dense time."""
    if not is_moe(arch) or not sixteen_bit_peak_tflops:
        return None
    share = routed_params_per_token(arch) / arch.params_active
    expert_flops = matmul_flops * share
    peak = sixteen_bit_peak_tflops * 1e12 * gpu_count
    shares = EXPERT_SHARE_OF_16BIT_RATE
    rate = Range(
        peak * utilization.low * shares.low,
        peak * utilization.expected * shares.expected,
        peak * utilization.high * shares.high,
    )
    expert_seconds = rate.inverted(expert_flops)
    ep = expert_parallel_degree(arch, device, data_parallel)
    if layout_expert_parallel > 1:
        # A layout's EP past the node: the node's share here, the rest across nodes (cluster.py).
        ep = min(ep, layout_expert_parallel)
    calls = (
        A2A_PER_MOE_LAYER_FORWARD * (2 if recomputed_forward else 1) + A2A_PER_MOE_LAYER_BACKWARD
    )
    micro_batches = tokens_to_train / (micro_batch_tokens * max(1, data_parallel))
    one = all_to_all_seconds(arch, device, ep, micro_batch_tokens)
    # A pipeline stage holds 1/pp of the MoE layers: a GPU dispatches and combines for those.
    total = one.scaled(calls * arch.moe_layers / pipeline_parallel * micro_batches)
    # Stacks that overlap dispatch and combine with the expert GEMMs (DeepEP, Megatron's EP
    # overlap) hide part of it: half at the fast end of the range (a range no wider than the
    # calibration allows); the expected and slow ends do not overlap.
    a2a = Range(total.low * A2A_HIDDEN_AT_FAST_END, total.expected, total.high)
    rule = (
        f"MoE: routed experts ({share:.0%} of the matmul FLOPs; "
        f"{tokens_per_expert(arch, micro_batch_tokens):,.0f} rows per expert per micro-batch) at "
        "the 16-bit peak in the utilisation band (fp8 does not speed them up in published "
        f"runs); expert parallelism {ep}: {calls} all-to-alls per MoE layer per micro-batch "
        "(dispatch and combine), half hidden behind compute at the fast end only"
    )
    return MoeTraining(
        expert_flops, expert_seconds, a2a, ep, tokens_per_expert(arch, micro_batch_tokens), rule
    )


def moe_assumptions(arch: ModelArchitecture, serving: bool) -> list[str]:
    """What the speed answer assumed of a MoE, for the answer's assumptions; served, what
    expert parallelism would change."""
    if not is_moe(arch):
        return []
    items = [
        f"mixture of experts: {routed_experts(arch)} routed experts, top-{arch.experts_per_token}, "
        f"in {arch.moe_layers} layers; a decode step reads every expert its tokens touch and "
        f"adds {DECODE_SECONDS_PER_MOE_LAYER.low * 1e6:.0f}-"
        f"{DECODE_SECONDS_PER_MOE_LAYER.high * 1e6:.0f} us per MoE layer (fitted on vLLM's "
        "Qwen3-30B-A3B at batch 1) "
        f"and a prefill {PREFILL_SECONDS_PER_EXPERT.low * 1e6:.0f}-"
        f"{PREFILL_SECONDS_PER_EXPERT.high * 1e6:.0f} us per expert it touches per MoE layer "
        "(fitted on SGLang's Qwen3-235B-A22B and DeepSeek-R1 first tokens on 8 B200s); "
        "training runs the routed experts' FLOPs at the 16-bit peak whatever the dtype (fp8 "
        "does not speed them up in published runs), experts spread over the "
        "node's data-parallel GPUs (expert parallelism; across nodes, over as many GPUs as "
        "the layout's expert parallelism needs to fit) with dispatch and combine all-to-alls "
        "of each token's hidden state to its top-k experts' GPUs; serving shards experts by "
        "tensor parallelism, balanced routing assumed"
    ]
    if serving:
        items.append(
            "served on several GPUs, expert parallelism on the same node holds the same memory "
            "as tensor parallelism; published comparisons put its decode step from as long as "
            "tensor parallelism's to 20% shorter and its first token from 20% later to 1.46x "
            "sooner, by stack, MoE kernel and GPU (docs/sizing.md), so the tensor-parallel "
            "figure stands for both"
        )
    return items
