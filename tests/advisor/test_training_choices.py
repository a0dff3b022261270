"""Training choices a stack offers beside its defaults (issue 15): activation offloading and the
optimizer step in the backward pass, as torchtune's recipes expose them
(enable_activation_offloading, optimizer_in_bwd). The published effect of each is in the
calibration set (torchtune's "Optimization flags" table, Llama 3.2 3B on an A100); these tests
hold the mechanism and the input's contract."""

import re

import pytest

from advisor.domain.sizing.bundled_models import bundled_models
from advisor.domain.sizing.layout import Parallelism
from advisor.domain.sizing.memory import memory_per_gpu
from advisor.domain.sizing.workload import Task
from tests.advisor.workloads import torchtune_3b

API = "/api/v1/advice/sizing"


workload = torchtune_3b


def test_offloading_activations_moves_every_checkpointed_layer_input_but_two_to_the_cpu():
    arch = bundled_models()["llama-3.2-3b"].architecture()
    kept = memory_per_gpu(workload(), Parallelism(1)).activations
    offloaded = memory_per_gpu(workload(activation_offloading=True), Parallelism(1)).activations
    layer_inputs = (arch.num_layers - 2) * arch.hidden_size * 2 * (2 * 4096)
    assert kept - offloaded == pytest.approx(layer_inputs, rel=1e-9)


def test_without_checkpointing_offloading_keeps_two_layers_of_activations():
    arch = bundled_models()["llama-3.2-3b"].architecture()
    every = memory_per_gpu(workload(gradient_checkpointing=False), Parallelism(1)).activations
    offloaded = memory_per_gpu(
        workload(gradient_checkpointing=False, activation_offloading=True), Parallelism(1)
    ).activations
    assert offloaded == pytest.approx(every * 2 / arch.num_layers, rel=1e-9)


def test_turning_the_optimizer_step_out_of_the_backward_pass_brings_back_the_gradient_buffer():
    arch = bundled_models()["llama-3.2-3b"].architecture()
    in_backward = memory_per_gpu(workload(), Parallelism(1)).gradients
    buffered = memory_per_gpu(workload(optimizer_in_backward=False), Parallelism(1)).gradients
    assert in_backward == arch.vocab_size * arch.hidden_size * 2  # the largest matrix only
    assert buffered == arch.params_total * 2  # bf16 gradients of every parameter


def test_the_stack_default_applies_when_nothing_is_chosen():
    assert workload().steps_in_backward and not workload().offloads_activations
    unsloth = workload(task=Task.LORA, stack_name="unsloth")
    assert unsloth.offloads_activations
    assert not unsloth.with_changes(activation_offloading=False).offloads_activations


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            dict(stack_name="hf_peft", activation_offloading=True),
            "activation_offloading: Hugging Face Transformers + PEFT does not offer it; "
            "choose stack torchtune",
        ),
        (
            dict(stack_name="hf_peft", optimizer_in_backward=True),
            "optimizer_in_backward: Hugging Face Transformers + PEFT does not offer it; "
            "choose stack torchtune",
        ),
        (
            dict(task=Task.INFERENCE, stack_name="vllm", activation_offloading=False),
            "activation_offloading is a training setting; task=inference does not train",
        ),
        (
            dict(task=Task.LORA, optimizer_in_backward=True),
            "optimizer_in_backward: only a full fine-tune steps its optimizer in the backward",
        ),
    ],
)
def test_a_choice_the_stack_does_not_offer_is_refused_naming_the_stacks_that_do(changes, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        workload(**changes).validate()


def test_turning_a_choice_off_is_always_possible():
    workload(stack_name="hf_peft", activation_offloading=False).validate()


@pytest.mark.django_db
def test_the_api_takes_both_choices_and_the_answer_shows_what_was_used(api):
    body = {"model": "llama-3.2-3b", "task": "full", "stack": "torchtune", "batch_size": 2}
    answer = api.post(
        API, {**body, "activation_offloading": True, "optimizer_in_backward": False}, format="json"
    ).json()
    assert answer["workload"]["activation_offloading"] is True
    assert answer["stack"]["activation_offloading"] is True
    assert answer["stack"]["optimizer_in_backward"] is False
    default = api.post(API, body, format="json").json()
    assert default["workload"]["optimizer_in_backward"] is None
    assert default["stack"]["optimizer_in_backward"] is True


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"activation_offloading": True}, "activation_offloading", "choose stack torchtune"),
        ({"optimizer_in_backward": "yes"}, "optimizer_in_backward", "Must be true or false."),
    ],
)
def test_the_api_refuses_a_bad_choice_with_a_400_naming_the_field(api, body, field, message):
    response = api.post(API, {"model": "llama-3.2-3b", "task": "lora", **body}, format="json")
    assert response.status_code == 400
    assert any(message in text for text in response.json()[field])
