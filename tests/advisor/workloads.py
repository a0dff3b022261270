"""Workloads several advisor tests size."""

from advisor.domain.sizing.bundled_models import bundled_models
from advisor.domain.sizing.workload import Optimizer, Task, Workload


def torchtune_3b(**changes) -> Workload:
    """torchtune's optimization-flags set-up: Llama 3.2 3B full fine-tune, batch 2 x 4,096
    tokens, torch.optim.AdamW in bf16 (the README's table; changes on top)."""
    settings = dict(
        task=Task.FULL,
        stack_name="torchtune",
        optimizer=Optimizer.ADAMW,
        batch_size=2,
        context_tokens=4096,
    )
    return Workload(bundled_models()["llama-3.2-3b"].architecture(), **(settings | changes))
