"""What a workload relies on, in the compatibility table's subjects: its stack, and the features
that stack uses for it (bitsandbytes' 4-bit base and 8-bit optimizers, FlashAttention, fp8 and
MXFP4 kernels). A candidate on an accelerator one of them does not run on is rejected with the
reason; a partial entry is a warning."""

from dataclasses import dataclass

from advisor.domain.compatibility import (
    BITSANDBYTES_4BIT,
    BITSANDBYTES_8BIT_OPTIMIZER,
    FLASH_ATTENTION_2,
    FP8_KERNELS,
    MXFP4_KERNELS,
    SUBJECT_LABELS,
    not_running_reason,
    partial_warning,
)
from advisor.domain.sizing.precision import Dtype
from advisor.domain.sizing.workload import Optimizer, Task, Workload

# Stacks whose QLoRA base and 8-bit optimizers are bitsandbytes' (torchtune's NF4 is torchao's).
BITSANDBYTES_STACKS = frozenset({"hf_peft", "unsloth"})


@dataclass(frozen=True)
class Requirement:
    subject: str
    # False: the answer still stands without it (FlashAttention: PyTorch's memory-efficient
    # attention takes its place, same memory, slower); a warning says so.
    needed: bool = True


def workload_requirements(workload: Workload) -> list[Requirement]:
    stack = workload.stack_name
    needs = [Requirement(stack)]
    if workload.task is Task.QLORA and stack in BITSANDBYTES_STACKS:
        needs.append(Requirement(BITSANDBYTES_4BIT))
    eight_bit = workload.task.trains and workload.optimizer is Optimizer.ADAMW_8BIT
    paged = workload.task is Task.FULL and workload.stack.paged_optimizer
    if eight_bit or paged:
        needs.append(Requirement(BITSANDBYTES_8BIT_OPTIMIZER))
    if workload.task.trains and workload.flash_attention:
        needs.append(Requirement(FLASH_ATTENTION_2, needed=False))
    if Dtype.FP8 in {workload.weight_dtype, workload.kv_dtype}:
        needs.append(Requirement(FP8_KERNELS))
    stored = workload.stored_weights
    if stored is not None and stored.method == "mxfp4":
        needs.append(Requirement(MXFP4_KERNELS))
    return needs


def unmet_requirement(
    requirements: list[Requirement], platform: str, gpu_name: str, *, skip_stack: bool = False
) -> str | None:
    """Why the workload cannot run on this GPU: the first needed subject that does not run
    there (the stack's own check skipped when another stack stands in for it)."""
    for requirement in requirements[1 if skip_stack else 0 :]:
        if requirement.needed:
            reason = not_running_reason(requirement.subject, platform, gpu_name)
            if reason:
                return reason
    return None


def requirement_warnings(
    requirements: list[Requirement], platform: str, gpu_name: str, *, skip_stack: bool = False
) -> list[str]:
    """What runs only in part, and what stands in for a feature that does not run."""
    warnings = []
    for requirement in requirements[1 if skip_stack else 0 :]:
        partial = partial_warning(requirement.subject, platform, gpu_name)
        if partial:
            warnings.append(partial)
        elif not requirement.needed and not_running_reason(requirement.subject, platform, gpu_name):
            warnings.append(
                f"{SUBJECT_LABELS[requirement.subject]} does not run on {gpu_name}: PyTorch's "
                "memory-efficient attention stands in (the same memory, slower)"
            )
    return warnings
