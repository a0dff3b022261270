"""Parameter totals against figures published outside this project (the Hub's safetensors
counts as other public code quotes them), for the bundled models whose config.json was taken
from a copy or assembled from quoted fields rather than the Hub file itself: a wrong number
in such a copy shows here."""

import json
from pathlib import Path

import pytest

from advisor.domain.sizing.architecture import architecture_from_config

MODELS = Path(__file__).resolve().parents[2] / "advisor" / "data" / "models"

# slug: (published total, where it was read)
PUBLISHED_TOTALS = {
    "gemma-3-1b": (999_885_952, "a public licence/size table of Hub models: google/gemma-3-1b-it"),
    "gemma-3-4b": (
        4_300_079_472,
        "keras-hub's gemma3 presets (medgemma_4b, the Gemma 3 4B architecture) and scripts "
        "that pin google/gemma-3-4b-it@093f9f38 by its parameter count",
    ),
    "gemma-3-12b": (12_187_325_040, "a public table of unsloth/gemma-3-12b-it's count"),
    "gemma-3-27b": (
        27_432_406_640,
        "keras-hub's medgemma_instruct_27b preset and llama.cpp's n_params for Gemma 3 27B",
    ),
    "qwen3-4b": (
        4_022_468_096,
        "llama.cpp's general.parameter_count for Qwen3 4B, and Hub safetensors totals quoted "
        "for Qwen/Qwen3-4B",
    ),
    "qwen3-14b": (14_768_307_200, "keras-hub's qwen3_14b_en preset; llama.cpp's n_params"),
    "qwen1.5-moe-a2.7b": (14_315_784_192, "keras-hub's qwen1.5_moe preset"),
    "granite-3.1-3b-a800m": (3_298_793_472, "a public model-gate log of the Hub checkpoint"),
    "mistral-small-3.2-24b": (
        24_011_361_280,
        "keras-hub's mistral3 preset (Mistral Small 3.1 24B) and manifests that pin "
        "mistralai/Mistral-Small-3.2-24B-Instruct-2506 by its parameter count",
    ),
}


@pytest.mark.parametrize("slug", sorted(PUBLISHED_TOTALS))
def test_the_total_equals_the_published_count(slug):
    config = json.loads((MODELS / f"{slug}.json").read_text())
    total, _source = PUBLISHED_TOTALS[slug]
    assert architecture_from_config(config).params_total == total
