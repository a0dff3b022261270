"""Memory per GPU, as a breakdown whose every line says where it comes from."""

from dataclasses import dataclass

from advisor.domain.sizing.precision import (
    BYTES_PER_VALUE,
    NF4_BITS_PER_PARAM,
    Dtype,
    is_quantised,
    weight_bytes_per_param,
)
from advisor.domain.sizing.workload import LORA_TARGETS_ALL, Optimizer, Task, Workload

GIB = 2**30

# What the device lets CUDA use: an H100 "80 GB" shows 79.19 GiB to PyTorch (vLLM's
# measurement in sizing_reference.json); driver and ECC reservations take the rest.
USABLE_FRACTION = 0.99
# CUDA context, kernels and library workspaces. Seen from 0.25 GiB (vLLM, lazy module loading)
# to 1.3 GB (Hugging Face's measurement on a V100); we assume the middle.
CUDA_CONTEXT_BYTES = 0.75 * GIB
# NCCL buffers when GPUs talk: vLLM's non-torch memory went from 0.25 GiB at TP=1 to
# 2.07 GiB at TP=2 on the same model.
COLLECTIVE_BUFFER_BYTES = 1.8 * GIB
# The caching allocator rounds and fragments what is allocated and freed as the job runs
# (activations, KV blocks, gradients, optimizer steps); weights are loaded once, contiguously.
ALLOCATOR_HEADROOM_FRACTION = 0.05
# vLLM-style serving runs prefill in chunks of at most this many tokens.
PREFILL_CHUNK_TOKENS = 8192
# Per-token transient values of a forward pass at inference (q, k, v, attention output, gated
# MLP, residuals), calibrated on vLLM's measured 1.89 GiB activation peak for Llama-3.1-8B at
# 8,192 batched tokens: (12·h + 4·I) 16-bit values per token.
INFERENCE_TRANSIENT_H, INFERENCE_TRANSIENT_I = 12, 4
FP32_BYTES = 4


@dataclass(frozen=True)
class Parallelism:
    gpu_count: int
    tensor_parallel: int = 1
    zero_stage: int = 0

    @property
    def data_parallel(self) -> int:
        return self.gpu_count // self.tensor_parallel

    def describe(self) -> str:
        if self.gpu_count == 1:
            return "single GPU"
        parts = []
        if self.tensor_parallel > 1:
            parts.append(f"tensor parallel {self.tensor_parallel}")
        if self.data_parallel > 1:
            parts.append(
                f"data parallel {self.data_parallel}"
                + (f" with ZeRO-{self.zero_stage}" if self.zero_stage else "")
            )
        return ", ".join(parts)


MEMORY_COMPONENTS = (
    "weights",
    "gradients",
    "optimizer_states",
    "activations",
    "kv_cache",
    "logits",
    "runtime_overhead",
    "allocator_headroom",
)


@dataclass(frozen=True)
class MemoryBreakdown:
    """Bytes per GPU."""

    weights: float = 0.0
    gradients: float = 0.0
    optimizer_states: float = 0.0
    activations: float = 0.0
    kv_cache: float = 0.0
    logits: float = 0.0
    runtime_overhead: float = 0.0
    allocator_headroom: float = 0.0

    @property
    def total(self) -> float:
        return (
            self.weights
            + self.gradients
            + self.optimizer_states
            + self.activations
            + self.kv_cache
            + self.logits
            + self.runtime_overhead
            + self.allocator_headroom
        )

    @property
    def model_states(self) -> float:
        return self.weights + self.gradients + self.optimizer_states

    def as_dict(self) -> dict[str, int]:
        return {name: round(getattr(self, name)) for name in MEMORY_COMPONENTS}


def usable_bytes(memory_gib: float) -> float:
    return memory_gib * GIB * USABLE_FRACTION


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


def _optimizer_bytes_per_param(workload: Workload) -> tuple[float, float, float]:
    """(weights, gradients, optimizer states) bytes per trained parameter.

    Full training in mixed precision keeps 16-bit weights and gradients and an fp32 master
    copy in the optimizer (2 + 2 + 12 bytes with AdamW: ZeRO's K = 12); fp32 training has no
    master copy (4 + 4 + 8). LoRA adapters are fp32 (PEFT's default with a 16-bit base);
    QLoRA adapters are bf16 with 32-bit paged AdamW states, as in the QLoRA code.
    """
    task, optimizer = workload.task, workload.optimizer
    if task is Task.QLORA:
        weights = grads = 2.0
        master = 0.0
    elif task is Task.LORA or workload.weight_dtype is Dtype.FP32:
        weights = grads = 2.0 if optimizer is Optimizer.ADAMW_BF16 else 4.0
        master = 0.0
    else:
        weights = grads = 2.0
        master = 0.0 if optimizer is Optimizer.ADAMW_BF16 else 4.0
    if optimizer is Optimizer.ADAFACTOR:
        states = _adafactor_state_bytes_per_param(workload)
    else:
        states = STATE_BYTES_PER_PARAM[optimizer]
    return weights, grads, master + states


def _adafactor_state_bytes_per_param(workload: Workload) -> float:
    """Adafactor keeps a row and a column of fp32 second moments per matrix."""
    arch = workload.architecture
    matrices = [(g.in_features, g.out_features, g.count) for g in arch.lora_groups]
    matrix_params = sum(i * o * c for i, o, c in matrices)
    factored = sum((i + o) * c for i, o, c in matrices)
    others = max(arch.params_total - matrix_params, 0)
    return FP32_BYTES * (factored + others) / arch.params_total


def _inference_weight_bytes(workload: Workload) -> float:
    arch = workload.architecture
    if workload.stored_weights:
        return workload.stored_weights.weight_bytes
    dtype = workload.weight_dtype
    if is_quantised(dtype):
        linear = arch.params_total - arch.params_embedding
        return linear * weight_bytes_per_param(dtype) + arch.params_embedding * 2
    return arch.params_total * BYTES_PER_VALUE[dtype]


def _activation_values_per_token_layer(workload: Workload) -> float:
    """Values a layer keeps for the backward pass, per token (no dropout masks: current LLMs
    train without dropout). Attention: both norm inputs, q, k, v, the attention output;
    without flash attention also the score and probability rows. MLP: its input and the
    gate, up and activation outputs (two for a classic MLP)."""
    arch = workload.architecture
    h = arch.hidden_size
    attention = 2 * h + (h + 2 * arch.kv_dim) + h
    if not workload.flash_attention:
        attention += 2 * arch.num_attention_heads * workload.context_tokens
    mlp = h + (3 if arch.gated_mlp else 2) * arch.intermediate_size
    return attention + mlp


def memory_per_gpu(workload: Workload, parallelism: Parallelism) -> MemoryBreakdown:
    arch = workload.architecture
    tp = parallelism.tensor_parallel
    runtime = CUDA_CONTEXT_BYTES + (COLLECTIVE_BUFFER_BYTES if parallelism.gpu_count > 1 else 0)
    if workload.task is Task.INFERENCE:
        weights = _inference_weight_bytes(workload) / tp
        sequence = workload.context_tokens + (workload.output_tokens if arch.encoder_decoder else 0)
        kv = arch.kv_cache_bytes(
            sequence, workload.batch_size, BYTES_PER_VALUE[workload.kv_dtype]
        ) / min(tp, arch.num_kv_heads)
        chunk = min(workload.batch_size * workload.context_tokens, PREFILL_CHUNK_TOKENS)
        transient = (
            INFERENCE_TRANSIENT_H * arch.hidden_size
            + INFERENCE_TRANSIENT_I * (arch.intermediate_size) / tp
        )
        activations = chunk * transient * 2
        logits = workload.batch_size * arch.vocab_size * FP32_BYTES / tp
        dynamic = kv + activations + logits
        return MemoryBreakdown(
            weights=weights,
            activations=activations,
            kv_cache=kv,
            logits=logits,
            runtime_overhead=runtime,
            allocator_headroom=dynamic * ALLOCATOR_HEADROOM_FRACTION,
        )

    dp, stage = parallelism.data_parallel, parallelism.zero_stage
    trained = trainable_params(workload)
    w_bytes, g_bytes, o_bytes = _optimizer_bytes_per_param(workload)
    if workload.task.adapters:
        if workload.task is Task.QLORA:
            linear = arch.params_total - arch.params_embedding
            frozen = linear * NF4_BITS_PER_PARAM / 8 + arch.params_embedding * 2
        else:
            frozen = arch.params_total * (4 if workload.weight_dtype is Dtype.FP32 else 2)
        weights = (frozen + trained * w_bytes) / tp / (dp if stage >= 3 else 1)
    else:
        weights = trained * w_bytes / tp / (dp if stage >= 3 else 1)
    gradients = trained * g_bytes / tp / (dp if stage >= 2 else 1)
    optimizer = trained * o_bytes / tp / (dp if stage >= 1 else 1)

    activation_bytes = 4 if workload.weight_dtype is Dtype.FP32 else 2
    tokens = workload.batch_size * workload.context_tokens
    per_layer = tokens * _activation_values_per_token_layer(workload) * activation_bytes
    if workload.gradient_checkpointing:
        # Only each layer's input is kept; one layer is recomputed in full at a time.
        stored = arch.num_layers * tokens * arch.hidden_size * activation_bytes + per_layer
    else:
        stored = arch.num_layers * per_layer
    activations = stored / tp
    logits = 2 * tokens * arch.vocab_size * FP32_BYTES / tp  # fp32 logits and their gradient
    dynamic = gradients + optimizer + activations + logits
    return MemoryBreakdown(
        weights=weights,
        gradients=gradients,
        optimizer_states=optimizer,
        activations=activations,
        logits=logits,
        runtime_overhead=runtime,
        allocator_headroom=dynamic * ALLOCATOR_HEADROOM_FRACTION,
    )


def kv_capacity_tokens(workload: Workload, parallelism: Parallelism, usable: float) -> int:
    """Tokens of KV cache that fit once everything else is placed (serving capacity)."""
    arch = workload.architecture
    if not arch.has_kv_cache:
        return 0
    breakdown = memory_per_gpu(workload, parallelism)
    free = usable - (breakdown.total - breakdown.kv_cache * (1 + ALLOCATOR_HEADROOM_FRACTION))
    per_token = arch.kv_bytes_per_token(BYTES_PER_VALUE[workload.kv_dtype]) / min(
        parallelism.tensor_parallel, arch.num_kv_heads
    )
    return max(int(free / (per_token * (1 + ALLOCATOR_HEADROOM_FRACTION))), 0)
