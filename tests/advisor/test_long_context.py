"""Contexts up to what the model is built for. Before: context_tokens stopped at 2,000,000, so
Llama 4 Scout could not be sized at its documented 10M tokens."""

import json

import pytest

from advisor.domain.sizing.bundled_models import MODELS_DIR, bundled_models
from advisor.domain.sizing.workload import Task, Workload

URL = "/api/v1/advice/sizing"
SCOUT_POSITIONS = 10_485_760  # max_position_embeddings of Llama-4-Scout-17B-16E's config


def test_llama_4_scout_is_sized_at_its_ten_million_token_context(api):
    body = {"model": "llama-4-scout-17b-16e", "task": "inference", "context_tokens": 10_000_000}
    response = api.post(URL, body, format="json")
    assert response.status_code == 200, response.content
    answer = response.json()
    assert answer["workload"]["context_tokens"] == 10_000_000
    assert answer["fits_anywhere"]


def test_the_chunked_layers_hold_one_chunk_of_kv_and_the_global_ones_the_whole_context():
    scout = bundled_models()["llama-4-scout-17b-16e"].architecture()
    text = json.loads((MODELS_DIR / "llama-4-scout-17b-16e.json").read_text())["text_config"]
    # K and V of every KV head, bf16, per layer and token, from the config's own fields.
    per_token_layer = 2 * text["num_key_value_heads"] * text["head_dim"] * 2
    global_layers = scout.num_layers - scout.sliding_window_layers
    context = 10_000_000
    expected = per_token_layer * (
        global_layers * context + scout.sliding_window_layers * scout.sliding_window
    )
    assert scout.sliding_window == 8192 and global_layers == 12
    assert scout.kv_cache_bytes(context, 1, 2) == pytest.approx(expected, rel=1e-9)


def test_beyond_the_models_positions_is_refused_naming_the_field(api):
    body = {"model": "llama-4-scout-17b-16e", "context_tokens": SCOUT_POSITIONS + 1}
    response = api.post(URL, body, format="json")
    assert response.status_code == 400
    assert "at most 10,485,760" in response.json()["context_tokens"][0]


def test_a_model_built_for_fewer_may_be_asked_up_to_two_million_flagged(api):
    llama2 = {"model": "llama-2-7b", "task": "inference", "context_tokens": 2_000_000}
    answer = api.post(URL, llama2, format="json").json()
    assert any("beyond the 4,096" in line for line in answer["assumptions"])
    refused = api.post(URL, {**llama2, "context_tokens": 2_000_001}, format="json")
    assert refused.status_code == 400 and "context_tokens" in refused.json()


def test_the_domain_refuses_a_context_past_the_ceiling_whatever_the_positions():
    scout = bundled_models()["llama-4-scout-17b-16e"].architecture()
    with pytest.raises(ValueError, match="context_tokens"):
        Workload(scout, task=Task.INFERENCE, context_tokens=SCOUT_POSITIONS * 2).validate()
