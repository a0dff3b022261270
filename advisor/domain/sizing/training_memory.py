"""Training memory per GPU: what a step holds, by what it is and when it is live (weights,
the layers ZeRO-3 / FSDP gather, gradients, optimizer states, kept and recomputed activations,
the loss), and the breakdown that has to fit; phases.py takes the allocated peak from the same
terms."""

from dataclasses import replace
from typing import NamedTuple

from advisor.domain.provenance import fitted
from advisor.domain.sizing.layout import Parallelism
from advisor.domain.sizing.memory_breakdown import (
    ALLOCATOR_HEADROOM_FRACTION,
    COLLECTIVE_BUFFER_BYTES,
    CUDA_CONTEXT_BYTES,
    FP32_BYTES,
    MemoryBreakdown,
)
from advisor.domain.sizing.precision import NF4_BITS_PER_PARAM, Dtype
from advisor.domain.sizing.stacks import Checkpointing
from advisor.domain.sizing.workload import LORA_TARGETS_ALL, Optimizer, Task, Workload


def trainable_params(workload: Workload) -> int:
    arch = workload.architecture
    if not workload.task.adapters:
        return arch.params_total
    targets = workload.lora_targets
    groups = [g for g in arch.lora_groups if targets == LORA_TARGETS_ALL or g.name in targets]
    return sum(workload.lora_rank * (g.in_features + g.out_features) * g.count for g in groups)


# Optimizer state bytes per trained parameter beyond any fp32 master copy: Adam's m and v in
# fp32, bf16 or 8 bits; SGD's momentum. (Adafactor's factored moments depend on the shapes.)
STATE_BYTES_PER_PARAM = {
    Optimizer.ADAMW: 8.0,
    Optimizer.ADAMW_BF16: 4.0,
    Optimizer.ADAMW_8BIT: 2.0,
    Optimizer.SGD: 4.0,
}


def _optimizer_bytes_per_param(workload: Workload, zero_stage: int) -> tuple[float, float, float]:
    """(weights, gradients, optimizer states) bytes per trained parameter.

    Full training in mixed precision keeps 16-bit weights and gradients and an fp32 master
    copy in the optimizer (2 + 2 + 12 bytes with AdamW: ZeRO's K = 12); under autocast (Hugging
    Face Trainer without ZeRO) fp32 weights and gradients with 16-bit casts (6 + 4 + 8); fp32
    training has no
    master copy (4 + 4 + 8). A pure-bf16 stack (torchtune) has no master copy and keeps the
    optimizer's moments in the parameters' dtype (torch.optim.AdamW: 2 + 2 + 4). LoRA adapters
    are fp32 (PEFT's default with a 16-bit base); QLoRA adapters are bf16 with 32-bit paged
    AdamW states, as in the QLoRA code (and as Unsloth's HF + FA2 context table implies).
    """
    task, optimizer, stack = workload.task, workload.optimizer, workload.stack
    master = 0.0
    states_scale = 1.0
    if stack.pure_bf16 and workload.weight_dtype is not Dtype.FP32:
        weights = grads = 2.0
        # 16-bit moments: half of the fp32 states (8-bit states stay 8-bit).
        states_scale = 1.0 if optimizer is Optimizer.ADAMW_8BIT else 0.5
    elif task is Task.QLORA:
        weights = grads = 2.0
    elif task is Task.LORA or workload.weight_dtype is Dtype.FP32:
        weights = grads = 2.0 if optimizer is Optimizer.ADAMW_BF16 else 4.0
    elif stack.autocast and zero_stage == 0 and optimizer is not Optimizer.ADAMW_BF16:
        # fp32 parameters (the optimizer steps them: no separate master) and gradients, plus
        # autocast's 16-bit copies of the weights, kept for the backward pass. With ZeRO the
        # Trainer hands the model to DeepSpeed's engine: its 16-bit layout below.
        weights, grads = 6.0, 4.0
    else:
        weights = grads = 2.0
        master = 0.0 if optimizer is Optimizer.ADAMW_BF16 else 4.0
    if optimizer is Optimizer.ADAFACTOR:
        states = _adafactor_state_bytes_per_param(workload)
    else:
        states = STATE_BYTES_PER_PARAM[optimizer]
    if optimizer is Optimizer.ADAMW_BF16:
        states_scale = 1.0  # already 16-bit
    return weights, grads, master + states * states_scale


def _adafactor_state_bytes_per_param(workload: Workload) -> float:
    """Adafactor keeps a row and a column of fp32 second moments per matrix."""
    arch = workload.architecture
    matrices = [(g.in_features, g.out_features, g.count) for g in arch.lora_groups]
    matrix_params = sum(i * o * c for i, o, c in matrices)
    factored = sum((i + o) * c for i, o, c in matrices)
    others = max(arch.params_total - matrix_params, 0)
    return FP32_BYTES * (factored + others) / arch.params_total


# ZeRO-3 and FSDP all-gather a layer's parameters to run it and free them after: the layer
# being run and the one prefetched (FSDP's forward and BACKWARD_PRE prefetch, DeepSpeed's
# prefetch bucket) are whole on every GPU, as are the layers a CPU offload brings in.
GATHERED_LAYERS = 2


def gathered_layer_bytes(workload: Workload) -> float:
    """The whole parameters of the layers ZeRO-3 / FSDP hold gathered, in the dtype they
    run in (bf16 under mixed precision, the 4-bit storage for QLoRA), before tensor parallelism."""
    arch = workload.architecture
    per_layer = (arch.params_total - arch.params_embedding) / arch.num_layers
    if workload.task is Task.QLORA:
        bytes_per_param = NF4_BITS_PER_PARAM / 8
    else:
        bytes_per_param = 4.0 if workload.weight_dtype is Dtype.FP32 else 2.0
    return GATHERED_LAYERS * per_layer * bytes_per_param


def _activation_values_per_token_layer(workload: Workload, *, scores: bool) -> float:
    """Values a layer keeps for the backward pass, per token (no dropout masks: current LLMs
    train without dropout). Attention: both norm inputs, q, k, v, the attention output;
    without flash attention (and unless the attention core is recomputed: selective
    checkpointing) also the score and probability rows. MLP: its input and the gate, up and
    activation outputs (two for a classic MLP)."""
    arch = workload.architecture
    h = arch.hidden_size
    attention = 2 * h + (h + 2 * arch.kv_dim) + h
    if scores and not workload.flash_attention:
        # The scores and the probabilities; where the softmax runs in fp32 (autocast) its
        # output is 4 bytes and its 16-bit cast feeds the next matmul: 2 + 4 + 2 bytes, four
        # 16-bit values' worth.
        per_score = 4 if workload.stack.autocast and workload.weight_dtype is not Dtype.FP32 else 2
        attention += per_score * arch.num_attention_heads * workload.context_tokens
    # A fused SwiGLU kernel (Unsloth) recomputes the activation in its backward pass.
    mlp_outputs = (3 if arch.gated_mlp else 2) - (1 if workload.stack.fused_kernels else 0)
    return attention + h + mlp_outputs * arch.intermediate_size


# Offloaded activations keep two layers on the GPU (kept_layers below): set with Unsloth's own
# longest contexts in view (8B on 24 GB, 70B on 48 GB, and the OOM past the first).
fitted(
    "_activation_bytes_per_token: kept_layers = 2 when offloaded",
    fitted_on=(
        "unsloth-table-llama-3.1-8b-unsloth-24gb-max-context",
        "unsloth-table-llama-3.3-70b-unsloth-48gb-max-context",
        "unsloth-llama-3.1-8b-unsloth-24gb-153977-oom",
    ),
)


def _activation_bytes_per_token(workload: Workload) -> tuple[float, float]:
    """Bytes per token the layers keep for the backward pass, by checkpointing mode: (kept
    from the forward pass, live only while a checkpointed layer is recomputed).

    none: every layer's values; selective (Korthikanti et al. 2022, arXiv 2205.05198): the
    same without the attention scores, which are recomputed; full: each layer's input (the
    residual stream, h values) and one layer recomputed at a time, whose values and their
    gradients are live together in its backward pass. Offloaded activations (Unsloth, or
    torchtune's activation offloading) keep only the layer being run and the one in flight.
    """
    arch = workload.architecture
    stack = workload.stack
    value_bytes = 4 if workload.weight_dtype is Dtype.FP32 else 2
    # PEFT's prepare_model_for_kbit_training upcasts norms and embeddings: fp32 residuals.
    residual_bytes = 4 if workload.task is Task.QLORA and stack.qlora_fp32_residual else value_bytes
    mode = workload.checkpointing
    # Offloaded (torchtune's enable_activation_offloading, Unsloth's checkpointing): what each
    # layer keeps streams to CPU memory; the layer being run and the one in flight stay.
    kept_layers = 2 if workload.offloads_activations else arch.num_layers
    if mode is Checkpointing.FULL:
        layer = 2 * _activation_values_per_token_layer(workload, scores=True) * value_bytes
        return kept_layers * arch.hidden_size * residual_bytes, layer
    layer = _activation_values_per_token_layer(workload, scores=mode is Checkpointing.NONE)
    # The two norm inputs are residual-stream values.
    residual_values = 2 * arch.hidden_size
    per_layer = (layer - residual_values) * value_bytes + residual_values * residual_bytes
    return kept_layers * per_layer, 0.0


class TrainingTerms(NamedTuple):
    """A training step's memory per GPU, by what it is and when it is live (bytes)."""

    weights: float
    gathered_layers: float
    gradients: float
    optimizer_states: float
    kept_activations: float  # kept from the forward pass for the backward pass
    recomputed_activations: float  # live only while a checkpointed layer is recomputed
    loss: float  # the loss's peak over the vocabulary
    # Made while the loss's tensors are live: the output projection's weight gradient when it
    # trains, with the optimizer step's temporary for it when the step runs in the backward.
    loss_phase_gradients: float
    gradients_persist: bool  # the gradient buffer outlives the step


def training_memory(workload: Workload, parallelism: Parallelism) -> MemoryBreakdown:
    """Every line of a training step at once: what has to fit."""
    terms = training_terms(workload, parallelism)
    runtime = CUDA_CONTEXT_BYTES + (COLLECTIVE_BUFFER_BYTES if parallelism.gpu_count > 1 else 0)
    activations = terms.kept_activations + terms.recomputed_activations
    # What runs out is PyTorch's reserved memory, and the published reserved and
    # out-of-memory figures in the calibration set (torchtune's README table, Unsloth's
    # context tables) follow every line together: the caching allocator keeps the blocks the
    # loss freed. The allocated peak, one phase at a time, is phases.py's.
    dynamic = terms.gradients + terms.optimizer_states + activations + terms.loss
    return MemoryBreakdown(
        weights=terms.weights,
        gathered_layers=terms.gathered_layers,
        gradients=terms.gradients,
        optimizer_states=terms.optimizer_states,
        activations=activations,
        logits=terms.loss,
        runtime_overhead=runtime,
        allocator_headroom=dynamic * ALLOCATOR_HEADROOM_FRACTION,
    )


def _unsharded_params(workload: Workload, parallelism: Parallelism, trained: int) -> float:
    """The trained parameters a data-parallel GPU holds (before tensor and pipeline splits) of
    a tensor ZeRO does not shard: all of them, less the routed experts expert parallelism puts
    on the other GPUs of its group (Megatron's EP: 1/EP of the experts each). Sharded by ZeRO,
    every GPU holds 1/dp of everything, experts or not."""
    ep = parallelism.expert_parallel
    if ep <= 1 or workload.task.adapters:
        return trained
    return trained - workload.architecture.params_routed_experts * (1 - 1 / ep)


def training_terms(workload: Workload, parallelism: Parallelism) -> TrainingTerms:
    arch = workload.architecture
    tp = parallelism.tensor_parallel
    # Pipeline stages hold a share of the layers' weights, gradients and optimizer states; the
    # first stage keeps as many micro-batches in flight as there are stages (1F1B), each of its
    # share of the layers: one micro-batch's activations of the whole model, as without it.
    split = tp * parallelism.pipeline_parallel
    stack = workload.stack
    dp, stage = parallelism.data_parallel, parallelism.zero_stage
    trained = trainable_params(workload)
    w_bytes, g_bytes, o_bytes = _optimizer_bytes_per_param(workload, stage)
    if workload.task.adapters:
        if workload.task is Task.QLORA:
            linear = arch.params_total - arch.params_embedding
            # PEFT upcasts the embeddings and the output head to fp32 for k-bit training.
            embedding_bytes = 4 if stack.qlora_fp32_residual else 2
            frozen = linear * NF4_BITS_PER_PARAM / 8 + arch.params_embedding * embedding_bytes
        else:
            fp32_shard = stage >= 3 and dp > 1 and stack.sharded_lora_base_fp32
            fp32 = workload.weight_dtype is Dtype.FP32 or fp32_shard
            frozen = arch.params_total * (4 if fp32 else 2)
        weights = (frozen + trained * w_bytes) / split / (dp if stage >= 3 else 1)
    else:
        held = trained / dp if stage >= 3 else _unsharded_params(workload, parallelism, trained)
        weights = held * w_bytes / split
    if workload.steps_in_backward and not workload.task.adapters:
        # Each parameter is stepped as its gradient arrives: the largest one (the embedding
        # or output matrix) is the most that is ever held.
        gradients = arch.vocab_size * arch.hidden_size * g_bytes / tp
    else:
        held = trained / dp if stage >= 2 else _unsharded_params(workload, parallelism, trained)
        gradients = held * g_bytes / split
    optimizer = trained * o_bytes / split / (dp if stage >= 1 else 1)
    if workload.optimizer_offload or workload.parameter_offload:
        # ZeRO-Offload / FSDP CPUOffloadPolicy: optimizer states (with any fp32 master) step
        # on the CPU.
        optimizer = 0.0
    if workload.parameter_offload:
        # ZeRO-Infinity / FSDP2 CPU offload: parameters and gradients live on the CPU.
        weights = 0.0
        gradients *= GATHERED_LAYERS / arch.num_layers
    gathered = 0.0
    if workload.parameter_offload or (stage >= 3 and dp > 1):
        gathered = gathered_layer_bytes(workload) / tp

    tokens = workload.batch_size * workload.context_tokens
    kept, recomputed = _activation_bytes_per_token(workload)
    output_matrix = 0.0 if workload.task.adapters else arch.vocab_size * arch.hidden_size / tp
    # torch.optim.AdamW's step makes a parameter-sized denominator; bitsandbytes' 8-bit step
    # works blockwise inside its kernel.
    step_temporary = (
        (workload.steps_in_backward and workload.optimizer is not Optimizer.ADAMW_8BIT)
        * output_matrix
        * w_bytes
    )
    return TrainingTerms(
        weights=weights,
        gathered_layers=gathered,
        gradients=gradients,
        optimizer_states=optimizer,
        kept_activations=tokens * kept / tp,
        recomputed_activations=tokens * recomputed / tp,
        loss=tokens * arch.vocab_size * stack.loss_bytes_per_vocab_entry / tp,
        loss_phase_gradients=output_matrix * g_bytes + step_temporary,
        gradients_persist=not stack.gradients_freed_between_steps,
    )


def paged_optimizer_memory(
    workload: Workload, memory: MemoryBreakdown, usable: float
) -> MemoryBreakdown | None:
    """A stack whose 8-bit AdamW is bitsandbytes' paged optimizer (torchtune's single-device
    recipes) keeps its states in unified memory, "automatically evicted to CPU RAM when the
    GPU runs out of memory" (https://huggingface.co/docs/bitsandbytes/main/en/optimizers):
    when the rest fits but the states do not, they page out. The breakdown without them, or
    None when paging does not apply or does not help."""
    if not (workload.stack.paged_optimizer and workload.optimizer is Optimizer.ADAMW_8BIT):
        return None
    if memory.total <= usable or memory.optimizer_states == 0:
        return None
    headroom = memory.optimizer_states * ALLOCATOR_HEADROOM_FRACTION
    resident = replace(
        memory,
        optimizer_states=0.0,
        allocator_headroom=memory.allocator_headroom - headroom,
    )
    return resident if resident.total <= usable else None


PAGED_OPTIMIZER_WARNING = (
    "optimizer states page to CPU memory (bitsandbytes paged 8-bit AdamW): they do not fit "
    "beside the model, so each step moves them across PCIe"
)
