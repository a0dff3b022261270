"""The allocated peak of a training step, phase by phase (advisor/domain/sizing/phases.py),
against the reserved memory that has to fit (the breakdown's sum)."""

import pytest

from advisor.domain.sizing.bundled_models import bundled_models
from advisor.domain.sizing.layout import Parallelism
from advisor.domain.sizing.memory import memory_per_gpu
from advisor.domain.sizing.phases import allocated_peak
from advisor.domain.sizing.recommend import rank_candidates
from advisor.domain.sizing.training_memory import training_terms
from advisor.domain.sizing.workload import Optimizer, Task, Workload
from tests.advisor.devices import GPUS
from tests.advisor.workloads import torchtune_3b

GIB = 2**30


def llama_3b(**changes) -> Workload:
    return torchtune_3b(**({"optimizer_in_backward": False} | changes))


def test_with_a_full_gradient_buffer_the_peak_is_the_end_of_the_backward_pass():
    terms = training_terms(llama_3b(), Parallelism(1))
    peak = allocated_peak(llama_3b(), Parallelism(1)).expected
    end_of_backward = (
        terms.weights + terms.optimizer_states + terms.gradients + terms.recomputed_activations
    )
    assert peak == pytest.approx(end_of_backward, rel=1e-9)
    # torchtune's flags table: + activation checkpointing, 24.9 GiB active.
    assert peak / GIB == pytest.approx(24.9, rel=0.03)


def test_stepping_in_the_backward_pass_moves_the_peak_to_the_loss():
    workload = llama_3b(optimizer_in_backward=True)
    terms = training_terms(workload, Parallelism(1))
    peak = allocated_peak(workload, Parallelism(1)).expected
    loss_phase = (
        terms.weights
        + terms.optimizer_states
        + terms.kept_activations
        + terms.loss
        + terms.loss_phase_gradients
    )
    assert peak == pytest.approx(loss_phase, rel=1e-9)
    assert peak / GIB == pytest.approx(23.1, rel=0.03)  # the table's next row


def test_the_allocated_peak_is_below_the_reserved_memory_that_has_to_fit():
    for workload in (llama_3b(), llama_3b(task=Task.LORA), llama_3b(gradient_checkpointing=False)):
        assert (
            allocated_peak(workload, Parallelism(1)).high
            < memory_per_gpu(workload, Parallelism(1)).total_range().high
        )


def test_a_gradient_buffer_kept_for_the_run_is_live_in_every_phase():
    arch = bundled_models()["llama-3.1-8b"].architecture()
    freed = Workload(arch, task=Task.PRETRAIN, stack_name="fsdp2", context_tokens=4096)
    kept = freed.with_changes(stack_name="deepspeed_zero")
    layout = Parallelism(8, 1, zero_stage=1)
    terms = training_terms(kept, layout)
    assert terms.gradients_persist and not training_terms(freed, layout).gradients_persist
    loss_phase = (
        terms.weights
        + terms.optimizer_states
        + terms.gradients
        + terms.kept_activations
        + max(terms.loss, terms.recomputed_activations)
    )
    assert allocated_peak(kept, layout).expected == pytest.approx(loss_phase, rel=1e-9)


@pytest.mark.django_db
def test_a_training_answer_gives_the_allocated_peak_and_a_serving_answer_does_not(api):
    body = {"model": "llama-3.2-3b", "task": "lora", "batch_size": 2}
    training = api.post("/api/v1/advice/sizing", body, format="json").json()
    assert 0 < training["memory_allocated_peak_bytes"] < sum(training["memory"].values())
    assert any("max_memory_allocated" in line for line in training["assumptions"])
    serving = api.post("/api/v1/advice/sizing", {"model": "llama-3.2-3b"}, format="json").json()
    assert serving["memory_allocated_peak_bytes"] is None


def test_paged_out_optimizer_states_are_not_in_the_allocated_peak():
    """torchtune's 8B full fine-tune with paged 8-bit AdamW on a 24 GB card: the states page to
    the CPU, so the allocated peak stays below the reserved memory that fits."""
    workload = Workload(
        bundled_models()["llama-3.1-8b"].architecture(),
        task=Task.FULL,
        stack_name="torchtune",
        optimizer=Optimizer.ADAMW_8BIT,
        batch_size=2,
        context_tokens=2048,
    )
    workload.validate()
    (paged,) = rank_candidates(workload, [GPUS["RTX4090"]], {}, counts=(1,))
    assert paged.fits and paged.memory.optimizer_states == 0
    peak = allocated_peak(workload, paged.parallelism, paged.memory)
    assert peak.high < paged.memory.total_range().high
    assert peak.expected < paged.usable_bytes
