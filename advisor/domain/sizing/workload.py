"""What a team wants to run: the model, the task and its settings, with visible defaults."""

from dataclasses import dataclass, field, replace
from enum import StrEnum

from advisor.domain.sizing.architecture import ModelArchitecture
from advisor.domain.sizing.architecture.model import StoredWeights
from advisor.domain.sizing.precision import Dtype


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

DEFAULT_CONTEXT_TOKENS = 4096
DEFAULT_FINE_TUNE_TOKENS = 100_000_000
CHINCHILLA_TOKENS_PER_PARAM = 20


@dataclass(frozen=True)
class Workload:
    architecture: ModelArchitecture
    task: Task = Task.INFERENCE
    # Inference
    weight_dtype: Dtype = Dtype.BF16
    kv_dtype: Dtype = Dtype.BF16
    batch_size: int = 1  # sequences in flight (serving) or micro-batch per GPU (training)
    context_tokens: int = DEFAULT_CONTEXT_TOKENS  # prompt + generated, or training sequence
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
    # Choosing
    pricing_model: str = "on_demand"
    goal: Goal = Goal.CHEAPEST
    # A quantised checkpoint (architecture.stored_weights) is served as stored unless a
    # weight_dtype was chosen: then False, and the weights are re-cast to weight_dtype.
    weights_as_stored: bool = True
    notes: tuple[str, ...] = field(default=())

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
        if self.batch_size < 1 or self.context_tokens < 1 or self.output_tokens < 0:
            raise ValueError("batch_size and context_tokens must be at least 1")
        if self.zero_stage not in {None, 0, 1, 2, 3}:
            raise ValueError("zero_stage must be 0, 1, 2 or 3")
        if self.task is Task.INFERENCE and arch.encoder_only and self.output_tokens:
            raise ValueError(f"{arch.name} is encoder-only: it does not generate tokens")
        if (
            self.task.trains
            and self.task is not Task.QLORA
            and self.weight_dtype
            in {
                Dtype.INT8,
                Dtype.INT4,
            }
        ):
            raise ValueError("training from int8/int4 weights is QLoRA: choose task=qlora")
        if arch.absolute_positions and arch.max_positions:
            longest = self.context_tokens + (0 if arch.encoder_only else self.output_tokens)
            if longest > arch.max_positions:
                raise ValueError(
                    f"context_tokens: {arch.name} has {arch.max_positions:,} learned positions; "
                    f"{longest:,} tokens (context + output) cannot be represented"
                )
        if self.lora_rank < 1:
            raise ValueError("lora_rank must be at least 1")
        known = {group.name for group in arch.lora_groups}
        unknown = set(self.lora_targets) - known - set(LORA_TARGETS_ALL)
        if self.task.adapters and unknown:
            raise ValueError(
                f"lora_targets {sorted(unknown)} are not modules of {arch.name} "
                f"(choose from {sorted(known)} or 'all')"
            )
