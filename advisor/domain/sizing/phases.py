"""The allocated peak of a training step, phase by phase: what `torch.cuda.max_memory_allocated`
(torchtune's peak_memory_active) reads, beside the reserved memory that runs out
(training_memory.py).

A step's tensors are not all live at once. At the end of the forward pass the loss holds its
logits over the vocabulary beside the activations kept for the backward pass; the backward pass
then frees those activations layer by layer while the gradients fill in, and recomputes one
checkpointed layer at a time. With the gradients freed between steps (PyTorch's default), the
allocated peak is the largest of:

- the loss: kept activations + the loss, with the output projection's weight gradient made
  in its backward (and, when the optimizer steps in the backward pass, its step's temporary);
- the start of the backward pass: kept activations + the recomputed layer;
- its end: every gradient + the recomputed layer (the kept activations are freed by then).

A gradient buffer kept for the run (DeepSpeed, Megatron) is live in every phase. Checked on
torchtune's optimization-flags table (Llama 3.2 3B, peak active memory per technique) in the
calibration set.
"""

from advisor.domain.provenance import fitted
from advisor.domain.ranges import Range
from advisor.domain.sizing.layout import Parallelism
from advisor.domain.sizing.memory_breakdown import MemoryBreakdown
from advisor.domain.sizing.memory_spread import MEMORY_SPREAD
from advisor.domain.sizing.stacks import TORCHTUNE_FLAGS_TABLE_ROWS
from advisor.domain.sizing.training_memory import TrainingTerms, training_terms
from advisor.domain.sizing.workload import Workload

# The phases were derived while reading torchtune's optimization-flags table.
fitted("allocated_peak", fitted_on=TORCHTUNE_FLAGS_TABLE_ROWS)


def _peak(terms: TrainingTerms, end: int) -> float:
    """The allocated peak with every term at one end of its spread (0 low, 1 expected, 2 high)."""

    def at(value: float, line: str) -> float:
        below, above = MEMORY_SPREAD[line]
        return value * (1 - below, 1.0, 1 + above)[end]

    weights = at(terms.weights, "weights") + at(terms.gathered_layers, "gathered_layers")
    states = at(terms.optimizer_states, "optimizer_states")
    gradients = at(terms.gradients, "gradients")
    kept = at(terms.kept_activations, "activations")
    recomputed = at(terms.recomputed_activations, "activations")
    loss = at(terms.loss, "logits")
    held = gradients if terms.gradients_persist else at(terms.loss_phase_gradients, "gradients")
    phases = (
        held + kept + loss,
        held + kept + recomputed,
        gradients + recomputed,
    )
    return weights + states + max(phases)


def allocated_peak(
    workload: Workload, parallelism: Parallelism, memory: MemoryBreakdown | None = None
) -> Range:
    """The training step's allocated peak per GPU (bytes), low / expected / high. `memory`:
    the candidate's breakdown as it runs, whose optimizer states may have paged out to the CPU
    (bitsandbytes' paged 8-bit AdamW): then they are not on the GPU in any phase."""
    terms = training_terms(workload, parallelism)
    if memory is not None and memory.optimizer_states < terms.optimizer_states:
        terms = terms._replace(optimizer_states=memory.optimizer_states)
    return Range(_peak(terms, 0), _peak(terms, 1), _peak(terms, 2))
