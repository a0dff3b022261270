"""What a team wants to run: the model, the task and its settings, with visible defaults.

Defaults that depend on the model or on another setting (the KV-cache dtype, the context) are
derived when the workload is made and stated in its notes; combinations no training stack runs
are refused by validate(), naming the setting that would run.
"""

from dataclasses import dataclass, field, replace
from enum import StrEnum

from advisor.domain.sizing.architecture import ModelArchitecture
from advisor.domain.sizing.architecture.model import StoredWeights
from advisor.domain.sizing.precision import Dtype
from advisor.domain.sizing.rental import MAX_CLUSTER_GPUS, MAX_GPUS, ON_DEMAND, Rental
from advisor.domain.sizing.stacks import (
    DEFAULT_STACK_BY_TASK,
    GPU_MEMORY_UTILIZATION_MAX,
    GPU_MEMORY_UTILIZATION_MIN,
    STACKS,
    Checkpointing,
    Stack,
    stack_problem,
)


class Task(StrEnum):
    INFERENCE = "inference"
    LORA = "lora"
    QLORA = "qlora"
    FULL = "full"
    PRETRAIN = "pretrain"

    @property
    def trains(self) -> bool:
        return self is not Task.INFERENCE

    @property
    def adapters(self) -> bool:
        return self in {Task.LORA, Task.QLORA}


class Optimizer(StrEnum):
    ADAMW = "adamw"  # mixed precision: 16-bit weights and grads, fp32 master + m + v
    ADAMW_BF16 = "adamw_bf16"  # pure bf16: weights, grads, m and v all 16-bit
    ADAMW_8BIT = "adamw_8bit"  # bitsandbytes 8-bit m and v, fp32 master
    SGD = "sgd"  # momentum, fp32 master
    ADAFACTOR = "adafactor"  # factored second moments, fp32 master


class Goal(StrEnum):
    CHEAPEST = "cheapest"
    FASTEST = "fastest"


LORA_TARGETS_ALL = ("all",)

DEFAULT_CONTEXT_TOKENS = 4096  # or the model's positions, when it has fewer
# A RoPE model may be asked beyond its configured positions (YaRN, NTK scaling: flagged) up to
# this; a model built for more (Llama 4 Scout's 10M) up to its own positions; nothing beyond
# the ceiling, which holds the longest documented context of any model (10,485,760) with room.
LONG_CONTEXT_TOKENS = 2_000_000
CONTEXT_TOKENS_CEILING = 16_777_216
DEFAULT_FINE_TUNE_TOKENS = 100_000_000
CHINCHILLA_TOKENS_PER_PARAM = 20
MAX_TRAIN_DAYS = 3650  # a deadline beyond ten years is a typo

# The weight dtypes each task runs with in mainstream stacks (PyTorch AMP, PEFT, bitsandbytes,
# DeepSpeed, Megatron-LM / Transformer Engine). For training, weight_dtype is the compute
# precision; QLoRA's base is NF4 whatever it says, so there it is the compute dtype only.
WEIGHT_DTYPES_BY_TASK: dict[Task, tuple[Dtype, ...]] = {
    Task.INFERENCE: tuple(Dtype),
    Task.LORA: (Dtype.FP32, Dtype.BF16, Dtype.FP16),
    Task.QLORA: (Dtype.BF16, Dtype.FP16),
    Task.FULL: (Dtype.FP32, Dtype.BF16, Dtype.FP16),
    # FP8 pre-training: Transformer Engine's FP8 matmuls with bf16 weights and fp32 master.
    Task.PRETRAIN: (Dtype.FP32, Dtype.BF16, Dtype.FP16, Dtype.FP8),
}


def default_kv_dtype(weight_dtype: Dtype) -> Dtype:
    """The KV cache in the weights' dtype, as an engine keeps it unless told otherwise; 8- and
    4-bit weights compute in bf16, so their cache is bf16."""
    return Dtype.BF16 if weight_dtype in {Dtype.FP8, Dtype.INT8, Dtype.INT4} else weight_dtype


def default_context_tokens(architecture: ModelArchitecture, output_tokens: int) -> int:
    """4,096 tokens, or fewer for a model built for fewer: one with learned positions has room
    for the generated tokens too (they take positions after the context)."""
    positions = architecture.max_positions
    if not positions:
        return DEFAULT_CONTEXT_TOKENS
    if architecture.absolute_positions and not architecture.encoder_only:
        positions -= output_tokens
    return max(1, min(DEFAULT_CONTEXT_TOKENS, positions))


def _training_dtype_problem(task: Task, weight_dtype: Dtype) -> str:
    if task is Task.QLORA:
        return (
            "QLoRA keeps the base in 4-bit NF4 and computes in bf16/fp16: weight_dtype "
            f"{weight_dtype} is not a QLoRA setting; use bf16"
        )
    if weight_dtype in {Dtype.INT8, Dtype.INT4}:
        return (
            f"training from {weight_dtype} weights is QLoRA: choose task=qlora (with "
            "weight_dtype bf16, its compute dtype)"
        )
    what = {Task.LORA: "LoRA on an", Task.FULL: "full fine-tuning in"}.get(task, task.value)
    return (
        f"{what} {weight_dtype} weights is not supported by mainstream stacks; use bf16 "
        "(mixed precision)"
    )


@dataclass(frozen=True)
class Workload:
    architecture: ModelArchitecture
    task: Task = Task.INFERENCE
    # Inference
    weight_dtype: Dtype = Dtype.BF16
    # None: derived by __post_init__ (default_kv_dtype), never None afterwards.
    kv_dtype: Dtype | None = None
    batch_size: int = 1  # sequences in flight (serving) or micro-batch per GPU (training)
    # Prompt + generated, or the training sequence. None: derived by __post_init__
    # (default_context_tokens), never None afterwards.
    context_tokens: int | None = None
    output_tokens: int = 256  # generated per request, for time per request
    # Training
    optimizer: Optimizer = Optimizer.ADAMW
    gradient_checkpointing: bool = True
    flash_attention: bool = True
    zero_stage: int | None = None  # None: the smallest stage that fits
    tensor_parallel: int = 1  # training: within a node
    lora_rank: int = 16
    lora_targets: tuple[str, ...] = LORA_TARGETS_ALL
    train_tokens: int | None = None  # None: 20 per parameter (pretrain) or 100M (fine-tune)
    # The serving or training stack (stacks.STACKS). None: derived by __post_init__ (the
    # task's default stack), never None afterwards.
    stack_name: str | None = None
    # Serving: the stack's memory fraction. None: derived by __post_init__ (the stack's
    # default); stays None for training.
    gpu_memory_utilization: float | None = None
    # Training: what each layer keeps for the backward pass. None: the stack's granularity
    # when gradient_checkpointing is on, none when it is off.
    activation_checkpointing: Checkpointing | None = None
    # Training: optimizer states (and parameters) on the CPU, where the stack can.
    optimizer_offload: bool = False
    parameter_offload: bool = False
    # Training: None means the stack's default (Stack.checkpoint_offload,
    # Stack.optimizer_in_backward); a choice needs a stack that offers it.
    activation_offloading: bool | None = None
    optimizer_in_backward: bool | None = None
    # Choosing: on_demand, spot, or any (the cheaper of the two for each candidate); where the
    # team can rent (providers, regions, marketplaces, at most how many GPUs).
    pricing_model: str = ON_DEMAND
    goal: Goal = Goal.CHEAPEST
    rental: Rental = field(default_factory=Rental)
    # Where the stack does not run, rank another stack's candidates beside its own (listed
    # apart otherwise).
    other_stacks: bool = False
    # A GPU count to size beside the answer's powers of two (a cluster is a multiple of the
    # instance's GPUs); training: a deadline in days, answered with the smallest cluster per
    # GPU type and provider that finishes within it.
    gpu_count: int | None = None
    train_days: float | None = None
    # A quantised checkpoint (architecture.stored_weights) is served as stored unless a
    # weight_dtype was chosen: then False, and the weights are re-cast to weight_dtype.
    weights_as_stored: bool = True
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        # Derived once, here, so that every caller (API, page, `size`, tests) gets the same
        # default and the same stated assumption; with_changes() keeps the derived values.
        derived = []
        if self.stack_name is None:
            object.__setattr__(self, "stack_name", DEFAULT_STACK_BY_TASK[self.task])
        stack = STACKS.get(self.stack_name)
        if stack and stack.serving and self.gpu_memory_utilization is None:
            object.__setattr__(self, "gpu_memory_utilization", stack.gpu_memory_utilization_default)
        if self.kv_dtype is None:
            kv_dtype = default_kv_dtype(self.weight_dtype)
            object.__setattr__(self, "kv_dtype", kv_dtype)
            if self.task is Task.INFERENCE and self.architecture.has_kv_cache:
                derived.append(
                    f"KV cache {kv_dtype}: "
                    + (
                        f"the weights are {self.weight_dtype} and compute in bf16"
                        if kv_dtype is not self.weight_dtype
                        else "the weights' dtype"
                    )
                    + " (kv_dtype not given: set it to size another cache)"
                )
        if self.context_tokens is None:
            context = default_context_tokens(self.architecture, self.output_tokens)
            object.__setattr__(self, "context_tokens", context)
            positions = self.architecture.max_positions
            if context < DEFAULT_CONTEXT_TOKENS and positions:
                room = f"{positions:,} positions"
                if context < positions:
                    room += f" less the {self.output_tokens:,} generated tokens"
                derived.append(
                    f"context {context:,} tokens: {self.architecture.name} has {room} "
                    f"(context_tokens not given; the default is {DEFAULT_CONTEXT_TOKENS:,})"
                )
            else:
                derived.append(f"context {context:,} tokens (context_tokens not given)")
        if derived:
            object.__setattr__(self, "notes", (*derived, *self.notes))

    @property
    def stack(self) -> Stack:
        """The stack's table of published behaviour (validate() refuses an unknown one)."""
        return STACKS[self.stack_name]

    @property
    def checkpointing(self) -> Checkpointing:
        """What each layer keeps for the backward pass: as chosen, else the stack's
        granularity when gradient checkpointing is on."""
        if not self.task.trains:
            return Checkpointing.NONE
        if self.activation_checkpointing is not None:
            return self.activation_checkpointing
        if not self.gradient_checkpointing:
            return Checkpointing.NONE
        return self.stack.checkpointing

    @property
    def offloads_activations(self) -> bool:
        """Whether the activations kept for the backward pass live in CPU memory."""
        if self.activation_offloading is None:
            return self.stack.checkpoint_offload
        return self.activation_offloading

    @property
    def steps_in_backward(self) -> bool:
        """Whether the optimizer steps each parameter as its gradient arrives (a full
        fine-tune's choice: an adapter's gradients are already small)."""
        if self.task.adapters:
            return False
        if self.optimizer_in_backward is None:
            return self.stack.optimizer_in_backward
        return self.optimizer_in_backward

    @property
    def tokens_to_train(self) -> int:
        if self.train_tokens:
            return self.train_tokens
        if self.task is Task.PRETRAIN:
            return CHINCHILLA_TOKENS_PER_PARAM * self.architecture.params_total
        return DEFAULT_FINE_TUNE_TOKENS

    @property
    def stored_weights(self) -> StoredWeights | None:
        """The checkpoint's stored weights when inference serves them as stored."""
        if self.task is not Task.INFERENCE or not self.weights_as_stored:
            return None
        return self.architecture.stored_weights

    def with_changes(self, **changes: object) -> "Workload":
        # Choosing a weight dtype overrides the checkpoint's stored precision.
        if "weight_dtype" in changes:
            changes.setdefault("weights_as_stored", False)
        return replace(self, **changes)

    def validate(self) -> None:
        arch = self.architecture
        problem = stack_problem(self.stack_name, self.task)
        if problem:
            raise ValueError(problem)
        self._validate_stack_settings()
        if self.batch_size < 1 or self.context_tokens < 1 or self.output_tokens < 0:
            raise ValueError("batch_size and context_tokens must be at least 1")
        if self.zero_stage not in {None, 0, 1, 2, 3}:
            raise ValueError("zero_stage must be 0, 1, 2 or 3")
        if self.task is Task.INFERENCE and arch.encoder_only and self.output_tokens:
            raise ValueError(f"{arch.name} is encoder-only: it does not generate tokens")
        if self.weight_dtype not in WEIGHT_DTYPES_BY_TASK[self.task]:
            raise ValueError(_training_dtype_problem(self.task, self.weight_dtype))
        if arch.absolute_positions and arch.max_positions:
            longest = self.context_tokens + (0 if arch.encoder_only else self.output_tokens)
            if longest > arch.max_positions:
                raise ValueError(
                    f"context_tokens: {arch.name} has {arch.max_positions:,} learned positions; "
                    f"{longest:,} tokens (context + output) cannot be represented"
                )
        built_for = max(LONG_CONTEXT_TOKENS, arch.max_positions or 0)
        longest_allowed = min(CONTEXT_TOKENS_CEILING, built_for)
        if self.context_tokens > longest_allowed:
            raise ValueError(
                f"context_tokens: at most {longest_allowed:,} for {arch.name} (its "
                f"{arch.max_positions or 0:,} positions, or {LONG_CONTEXT_TOKENS:,} for a "
                "model built for fewer)"
            )
        if self.lora_rank < 1:
            raise ValueError("lora_rank must be at least 1")
        self._validate_cluster()
        known = {group.name for group in arch.lora_groups}
        unknown = set(self.lora_targets) - known - set(LORA_TARGETS_ALL)
        if self.task.adapters and unknown:
            raise ValueError(
                f"lora_targets {sorted(unknown)} are not modules of {arch.name} "
                f"(choose from {sorted(known)} or 'all')"
            )

    def _validate_cluster(self) -> None:
        ceiling = self.rental.max_gpus
        if not 1 <= ceiling <= MAX_CLUSTER_GPUS:
            raise ValueError(f"max_gpus must be between 1 and {MAX_CLUSTER_GPUS:,}")
        if ceiling > MAX_GPUS and not self.task.trains:
            raise ValueError(
                f"max_gpus: serving sizes one instance, at most {MAX_GPUS} GPUs; only training "
                f"spans nodes (up to {MAX_CLUSTER_GPUS:,})"
            )
        count = self.gpu_count
        if count is not None and not 1 <= count <= ceiling:
            raise ValueError(
                f"gpu_count must be between 1 and max_gpus ({ceiling:,}); raise max_gpus "
                f"(up to {MAX_CLUSTER_GPUS:,} for training) to size {count:,}"
            )
        if count is not None and count > MAX_GPUS and count % 2:
            raise ValueError(
                f"gpu_count: {count:,} GPUs are no whole number of instances (a cluster is a "
                "multiple of the instance's GPUs: 8 for most)"
            )
        if self.train_days is not None and not self.task.trains:
            raise ValueError("train_days is a training deadline; task=inference does not train")
        if self.train_days is not None and not 0 < self.train_days <= MAX_TRAIN_DAYS:
            raise ValueError(f"train_days must be above 0 and at most {MAX_TRAIN_DAYS:,}")

    def _validate_stack_settings(self) -> None:
        stack = self.stack
        fraction = self.gpu_memory_utilization
        if fraction is not None and not stack.serving:
            raise ValueError(
                "gpu_memory_utilization is a serving stack's memory fraction; "
                f"{stack.label} trains (leave it empty)"
            )
        if fraction is not None and not (
            GPU_MEMORY_UTILIZATION_MIN <= fraction <= GPU_MEMORY_UTILIZATION_MAX
        ):
            raise ValueError(
                f"gpu_memory_utilization must be between {GPU_MEMORY_UTILIZATION_MIN} and "
                f"{GPU_MEMORY_UTILIZATION_MAX}"
            )
        self._validate_stack_choice(
            "activation_offloading", self.activation_offloading, "activation_offload_supported"
        )
        self._validate_stack_choice(
            "optimizer_in_backward", self.optimizer_in_backward, "optimizer_in_backward_supported"
        )
        if self.optimizer_in_backward and self.task.adapters:
            raise ValueError(
                "optimizer_in_backward: only a full fine-tune steps its optimizer in the "
                "backward pass (an adapter's gradients are already small)"
            )
        if (self.optimizer_offload or self.parameter_offload) and not stack.offload_supported:
            able = [s.name for s in STACKS.values() if s.offload_supported and self.task in s.tasks]
            raise ValueError(
                f"optimizer_offload: {stack.label} does not offload to the CPU"
                + (f"; choose stack {' or '.join(able)}" if able else "")
            )

    def _validate_stack_choice(self, name: str, chosen: bool | None, supported: str) -> None:
        """A training choice: refused for serving, and turned on only where the stack offers it
        (naming the stacks that do); turning it off is always possible."""
        if chosen is None:
            return
        if not self.task.trains:
            raise ValueError(f"{name} is a training setting; task={self.task} does not train")
        if chosen and not getattr(self.stack, supported):
            able = [
                s.name for s in STACKS.values() if getattr(s, supported) and self.task in s.tasks
            ]
            raise ValueError(
                f"{name}: {self.stack.label} does not offer it"
                + (f"; choose stack {' or '.join(able)}" if able else "")
            )
