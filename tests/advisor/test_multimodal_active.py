"""A multimodal model's vision tower is loaded with its weights but idle while text is
generated (issue 23): Mistral Small 3.x counted its Pixtral tower, and Gemma 3 its SigLIP
tower, as active per text token, so every prefill, decode and training figure carried them."""

import pytest

from advisor.domain.sizing.architecture import architecture_from_config
from advisor.domain.sizing.bundled_models import bundled_models
from advisor.domain.sizing.speed.inference import _weight_bytes_read
from advisor.domain.sizing.workload import Task, Workload
from tests.helpers import bundled_config

MULTIMODAL = (
    *("mistral-small-3.2-24b", "gemma-3-4b", "gemma-3-12b", "gemma-3-27b"),
    *("llama-4-scout-17b-16e", "llama-4-maverick-17b-128e"),
)
# A block-fp8 quantization_config (DeepSeek-V3's form).
FP8_BLOCKS = {
    "activation_scheme": "dynamic",
    "fmt": "e4m3",
    "quant_method": "fp8",
    "weight_block_size": [128, 128],
}


def text_only(slug: str):
    """The same model read without its vision_config: the text model alone."""
    config = {key: value for key, value in bundled_config(slug).items() if key != "vision_config"}
    return architecture_from_config(config)


@pytest.mark.parametrize("slug", MULTIMODAL)
def test_the_vision_tower_counts_in_the_total_but_not_per_text_token(slug):
    whole = bundled_models()[slug].architecture()
    text = text_only(slug)
    assert whole.params_vision > 0
    assert whole.params_total == text.params_total + whole.params_vision
    assert whole.params_active == text.params_active


@pytest.mark.parametrize("slug", MULTIMODAL)
def test_a_decode_step_reads_the_text_weights_not_the_vision_tower(slug):
    def read(architecture):
        return _weight_bytes_read(Workload(architecture=architecture, task=Task.INFERENCE))

    assert read(bundled_models()[slug].architecture()) == pytest.approx(read(text_only(slug)))


def test_a_quantised_moe_decode_step_does_not_read_its_vision_tower():
    """Failed before the fix: a quantised MoE's decode read its stored bytes less the idle
    experts, the vision tower included (Scout in fp8: 20.11 GB a step against 19.24)."""
    config = {**bundled_config("llama-4-scout-17b-16e"), "quantization_config": FP8_BLOCKS}
    text = {key: value for key, value in config.items() if key != "vision_config"}

    def read(architecture):
        return _weight_bytes_read(Workload(architecture=architecture, task=Task.INFERENCE))

    whole = architecture_from_config(config)
    assert whole.stored_weights.vision_bytes > 0
    assert read(whole) == pytest.approx(read(architecture_from_config(text)))


def test_mistral_small_active_parameters_are_its_text_model():
    """24.0B in all (the published count) of which the Pixtral tower and projector are about
    0.4B: 23.6B per text token."""
    arch = bundled_models()["mistral-small-3.2-24b"].architecture()
    assert arch.params_total == 24_011_361_280
    assert 23.4e9 < arch.params_active < 23.7e9
