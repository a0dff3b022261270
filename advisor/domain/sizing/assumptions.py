"""What every sizing answer assumes, in words a person can check: the engine's constants and
the workload's settings, each figure named where it is defined."""

from advisor.domain.ranges import Range
from advisor.domain.sizing.memory_breakdown import (
    ALLOCATOR_HEADROOM_FRACTION,
    COLLECTIVE_BUFFER_BYTES,
    CUDA_CONTEXT_BYTES,
    GIB,
    USABLE_FRACTION,
)
from advisor.domain.sizing.ranking import COST_TIE_FRACTION
from advisor.domain.sizing.rental import ANY_PRICING, OFFER_TIE_FRACTION
from advisor.domain.sizing.serving_memory import PREFILL_CHUNK_TOKENS
from advisor.domain.sizing.speed import (
    DECODE_BANDWIDTH_EFFICIENCY,
    INFERENCE_COMPUTE_EFFICIENCY,
    prompt_tokens,
    recompute_flops,
    training_flops,
)
from advisor.domain.sizing.speed.efficiency import (
    TRAINING_UTILIZATION_AMPERE,
    TRAINING_UTILIZATION_DEFAULT,
    TRAINING_UTILIZATION_HOPPER,
)
from advisor.domain.sizing.speed.moe import moe_assumptions
from advisor.domain.sizing.stacks import Budget
from advisor.domain.sizing.training_memory import trainable_params
from advisor.domain.sizing.workload import Task, Workload


def _band(band: Range) -> str:
    return f"{band.low:.0%}/{band.expected:.0%}/{band.high:.0%}"


def _memory_items(workload: Workload) -> list[str]:
    """The memory budget and what the stack keeps, in the answer's words."""
    stack = workload.stack
    cuda = (
        "the total nvidia-smi reports less the driver's 468 MiB where the catalogue has it "
        f"(an L4 shows 22.0 GiB: ECC takes 1/16), else {USABLE_FRACTION:.0%} of the datasheet "
        "capacity (an H100's 80 GiB as 79.2 GiB); memory in GiB (2^30 bytes)"
    )
    if stack.serving:
        budget = {
            Budget.TOTAL: "weights + activation peak + non-torch memory + the KV-cache pool",
            Budget.STATIC: "weights + the KV-cache pool (activations and CUDA graphs in the rest)",
            Budget.FREE: "the KV-cache pool, as a fraction of what is free after weights, "
            "activations and runtime",
        }[stack.budget]
        return [
            f"stack {stack.label}: gpu_memory_utilization {workload.gpu_memory_utilization:.2f} "
            f"of the memory CUDA reports = {budget}; {cuda}",
            f"non-torch memory (CUDA context, NCCL): {stack.non_torch_bytes(1) / GIB:.2f} GiB on "
            f"one GPU, {stack.non_torch_bytes(2) / GIB:.2f} GiB with tensor parallelism "
            "(vLLM's logged figures); the KV pool is allocated up front: no allocator headroom",
            "fits when the pool holds the batch's KV cache; concurrency = pool tokens / context",
        ]
    loss = (
        f"chunked loss: {stack.loss_bytes_per_vocab_entry:g} bytes per token per vocabulary "
        "entry, never the full fp32 logits"
        if stack.loss_chunking
        else f"loss over the full logits: {stack.loss_bytes_per_vocab_entry:g} bytes per token "
        "per vocabulary entry (fp32 copies and gradients)"
    )
    offload = (
        "parameters, gradients and optimizer states on the CPU"
        if workload.parameter_offload
        else "optimizer states on the CPU"
        if workload.optimizer_offload
        else "nothing offloaded"
    )
    items = [
        f"usable memory: {cuda}",
        f"runtime overhead: {CUDA_CONTEXT_BYTES / GIB:.2f} GiB CUDA context per GPU, plus "
        f"{COLLECTIVE_BUFFER_BYTES / GIB:.1f} GiB of NCCL buffers when GPUs communicate",
        f"allocator headroom: {ALLOCATOR_HEADROOM_FRACTION:.0%} over what is allocated while "
        "running (activations, gradients, optimizer states), not the weights",
        f"stack {stack.label}: activation checkpointing {workload.checkpointing}; {loss}; "
        f"{offload}"
        + ("; activations offloaded to CPU memory" if workload.offloads_activations else "")
        + ("; optimizer steps in the backward pass" if workload.steps_in_backward else "")
        + ("; pure bf16 (no fp32 master weights)" if stack.pure_bf16 else ""),
    ]
    if workload.task.trains:
        items.append(
            "training memory is what has to fit: every line at once, as the published "
            "reserved and out-of-memory figures behave (the caching allocator keeps what the "
            "loss freed); torch.cuda.max_memory_allocated reads less, the largest phase of "
            "the step (memory_allocated_peak_bytes)"
        )
    return items


def assumptions(workload: Workload) -> list[str]:
    arch = workload.architecture
    items = [
        *_memory_items(workload),
        f"parameters: {arch.params_total:,} total, {arch.params_active:,} active per token",
    ]
    items.extend(arch.notes)
    items.extend(moe_assumptions(arch, serving=not workload.task.trains))
    if arch.max_positions and workload.context_tokens > arch.max_positions:
        items.append(
            f"context of {workload.context_tokens:,} tokens is beyond the "
            f"{arch.max_positions:,} the model was configured for: it needs context extension "
            "(RoPE scaling), and quality there is not guaranteed"
        )
    items.extend(workload.notes)
    if workload.task is Task.INFERENCE:
        if workload.stored_weights:
            items.append(f"{workload.stored_weights.summary}; KV cache {workload.kv_dtype}")
        else:
            items.append(
                f"weights {workload.weight_dtype}, KV cache {workload.kv_dtype}; quantised "
                "formats keep embeddings and the output head in 16-bit"
            )
        if arch.stored_weights and not workload.stored_weights:
            items.append(
                f"weights {workload.weight_dtype} as chosen (weight_dtype): this overrides the "
                f"checkpoint's stored precision ({arch.stored_weights.method} quantization_config)"
            )
        items += [
            f"{workload.batch_size} sequence(s) of {workload.context_tokens:,} tokens, "
            f"{workload.output_tokens:,} generated per request",
            f"activations: a prefill chunk of up to {PREFILL_CHUNK_TOKENS:,} tokens",
            f"prefill (time to first token): 2·N FLOPs per prompt token "
            f"({prompt_tokens(workload):,} prompt tokens: the context less the generated ones) "
            f"at {INFERENCE_COMPUTE_EFFICIENCY.low:.0%}-{INFERENCE_COMPUTE_EFFICIENCY.high:.0%} "
            "of dense peak, or one read of the weights if that is slower",
            "decode: bytes read per step (weights + the KV cache at its average length over the "
            "output) over bandwidth at "
            f"{DECODE_BANDWIDTH_EFFICIENCY.low:.0%}/{DECODE_BANDWIDTH_EFFICIENCY.expected:.0%}/"
            f"{DECODE_BANDWIDTH_EFFICIENCY.high:.0%} of the roofline, or compute at "
            f"{INFERENCE_COMPUTE_EFFICIENCY.low:.0%}-{INFERENCE_COMPUTE_EFFICIENCY.high:.0%} "
            "of dense peak, whichever is slower; int4/int8 weight-only kernels (and fp8 on GPUs "
            "without fp8 units) add their dequantisation on the CUDA cores",
            "tensor parallelism: 2 all-reduces per layer per step, each a latency growing with "
            "the GPU count plus its bytes over NVLink or PCIe as the catalogue gives the link",
        ]
    else:
        items += [
            f"training {workload.task}: {trainable_params(workload):,} trained parameters, "
            f"optimizer {workload.optimizer}, precision {workload.weight_dtype}",
            f"micro-batch {workload.batch_size} × {workload.context_tokens:,} tokens per GPU; "
            f"gradient checkpointing {'on' if workload.gradient_checkpointing else 'off'}; "
            f"flash attention {'on' if workload.flash_attention else 'off'}",
            f"time: {training_flops(workload)[1]} model FLOPs (what MFU counts), + 6·L·s·h·D "
            f"for the attention core, {recompute_flops(workload)[1]}, for "
            f"{workload.tokens_to_train:,} training tokens, over dense peak × the GPU "
            f"architecture's utilisation: Ampere {_band(TRAINING_UTILIZATION_AMPERE)}, Hopper "
            f"{_band(TRAINING_UTILIZATION_HOPPER)}, others "
            f"{_band(TRAINING_UTILIZATION_DEFAULT)} (published runs)",
        ]
        if workload.task.adapters:
            items.append(
                f"LoRA rank {workload.lora_rank} on "
                f"{', '.join(workload.lora_targets)} linear layers"
            )
    pricing = (
        "the cheaper of on-demand and spot for each candidate (each offer says which)"
        if workload.pricing_model == ANY_PRICING
        else workload.pricing_model.replace("_", "-")
    )
    items.append(
        f"prices: {pricing}, the cheapest offer per instance that is not stale; within "
        f"{OFFER_TIE_FRACTION:.0%} of it, a provider that is not a marketplace and a live price "
        f"first; costs within {COST_TIE_FRACTION:.0%} tie, and the simpler layout to rent "
        "(fewer GPUs, no tensor parallelism over PCIe) goes first"
    )
    items.extend(workload.rental.notes())
    return items
