"""The bundled Llama 3.3 70B, DeepSeek-R1 distills, Granite 3.1 MoE and Command R7B: counts
equal the meta-device references exactly, and the totals equal the published parameter counts.

Before these configs were bundled, `bundled_models()` had no entry for these slugs (KeyError).
The references (tests/fixtures/model_references.json) come from
tests/fixtures/meta_device_counts.py (transformers on PyTorch's meta device)."""

import json
from pathlib import Path

import pytest

from advisor.domain.sizing.architecture import architecture_from_config
from advisor.domain.sizing.bundled_models import bundled_models
from tests.helpers import bundled_config

REFERENCES = json.loads(
    (Path(__file__).resolve().parents[1] / "fixtures" / "model_references.json").read_text()
)
# Each checkpoint's parameter count as published (its source is in the model's index.json entry).
PUBLISHED_TOTALS = {
    "deepseek-r1-distill-qwen-32b": 32_763_876_352,
    "llama-3.3-70b": 70_553_706_496,
    "deepseek-r1-distill-llama-70b": 70_553_706_496,
    "granite-3.1-3b-a800m": 3_298_793_472,
}
# No exact published count was found for Command R7B; llama.cpp's loader reports 8.03 B.
PUBLISHED_BILLIONS = {"command-r7b": 8.03}
SLUGS = (*PUBLISHED_TOTALS, *PUBLISHED_BILLIONS)


@pytest.mark.parametrize("slug", SLUGS)
def test_counts_equal_the_meta_device_references_exactly(slug):
    expected = REFERENCES[slug]
    arch = architecture_from_config(bundled_config(slug))
    assert arch.params_total == expected["total_params"]
    assert arch.params_active == expected["active_params"]
    assert arch.kv_bytes_per_token(2) == expected["kv_bytes_per_token_bf16"]


@pytest.mark.parametrize("slug", PUBLISHED_TOTALS)
def test_totals_equal_the_published_parameter_counts(slug):
    assert architecture_from_config(bundled_config(slug)).params_total == PUBLISHED_TOTALS[slug]


@pytest.mark.parametrize("slug", PUBLISHED_BILLIONS)
def test_totals_round_to_the_published_billions(slug):
    total = architecture_from_config(bundled_config(slug)).params_total
    assert round(total / 1e9, 2) == PUBLISHED_BILLIONS[slug]


def test_command_r7b_windows_three_layers_in_four_and_keeps_its_8k_positions():
    arch = architecture_from_config(bundled_config("command-r7b"))
    assert (arch.sliding_window, arch.sliding_window_layers) == (4096, 24)
    assert arch.max_positions == 8192


@pytest.mark.parametrize("slug", SLUGS)
def test_bundled_with_an_index_entry_naming_its_hub_id_and_source(slug):
    model = bundled_models()[slug]
    assert model.source_url == f"https://huggingface.co/{model.hf_id}/blob/main/config.json"
    assert model.architecture().params_total == REFERENCES[slug]["total_params"]
