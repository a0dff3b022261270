"""POST /api/v1/advice/sizing and `manage.py size`: the documented JSON, errors as 400."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from advisor.domain.sizing.bundled_models import MODELS_DIR
from catalog.models import Gpu

URL = "/api/v1/advice/sizing"


def test_a_sizing_answer_has_the_documented_fields(api):
    response = api.post(
        URL, {"model": "llama-3.1-70b", "task": "qlora", "context_tokens": 4096}, format="json"
    )
    assert response.status_code == 200
    body = response.json()
    assert body["model"]["params_total"] == 70_553_706_496
    assert body["model"]["params_active"] == 70_553_706_496
    assert body["model"]["kv_bytes_per_token"] == 327_680
    assert set(body["memory"]) == {
        "weights",
        "gathered_layers",
        "gradients",
        "optimizer_states",
        "activations",
        "kv_cache",
        "logits",
        "runtime_overhead",
        "allocator_headroom",
    }
    first = body["candidates"][0]
    assert {"gpu", "gpu_count", "fits", "rejection", "reason", "usd_per_hour"} <= set(first)
    assert {"freshness", "price_observed_at", "pricing_url", "provider_kind"} <= set(first["offer"])
    # The first 25 that run; the others counted by why not (1, 2, 4 and 8 of every GPU).
    assert len(body["candidates"]) == 25 and all(c["fits"] for c in body["candidates"])
    counted = body["candidates_running"] + sum(r["count"] for r in body["rejected_summary"])
    assert counted == 4 * Gpu.objects.count()
    assert body["assumptions"]


def test_max_candidates_and_include_rejected_list_more(api):
    """Before: 328 candidates, 282 KB, with no way to ask for less."""
    body = {"model": "llama-3.1-70b", "task": "qlora"}
    every = api.post(URL, {**body, "max_candidates": 0, "include_rejected": True}, format="json")
    assert len(every.json()["candidates"]) == 4 * Gpu.objects.count()
    short = api.post(URL, {**body, "max_candidates": 3}, format="json").json()
    assert len(short["candidates"]) == 3
    assert short["candidates"] == every.json()["candidates"][:3]
    assert len(api.post(URL, body, format="json").content) < 100_000
    summary = short["rejected_summary"]
    assert {"rejection", "count", "example"} <= set(summary[0])
    assert summary == sorted(summary, key=lambda row: -row["count"])


def test_kv_bytes_per_token_follow_the_chosen_kv_dtype(api):
    body = api.post(URL, {"model": "llama-3.1-8b", "kv_dtype": "fp8"}, format="json").json()
    assert body["model"]["kv_bytes_per_token"] == 65_536


def test_an_uploaded_config_is_sized_like_the_bundled_model(api):
    config = json.loads((MODELS_DIR / "qwen2.5-7b.json").read_text())
    body = api.post(URL, {"config": config}, format="json").json()
    assert body["model"]["params_total"] == 7_615_616_512


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"model": "nope"}, "model"),
        ({}, "model"),
        ({"model": "gpt2", "params": 7_000_000_000}, "model"),
        ({"model": "gpt2", "context_tokens": 0}, "context_tokens"),
        ({"model": "gpt2", "batch_size": "many"}, "batch_size"),
        ({"model": "gpt2", "task": "fly"}, "task"),
        ({"model": "gpt2", "weight_dtype": "fp4"}, "weight_dtype"),
        ({"model": "gpt2", "zero_stage": 5}, "zero_stage"),
        ({"config": "{not json"}, "config"),
        ({"config": [1, 2]}, "config"),
        ({"config": {"model_type": "mamba"}}, "config"),
        ({"config": {"model_type": "llama", "hidden_size": "wide"}}, "config"),
        ({"params": 5}, "params"),
        ({"model": "llama-3.1-8b", "task": "lora", "lora_targets": ["nope"]}, "lora_targets"),
        # A number is not a module name (DRF's CharField used to turn 0 into "0").
        ({"model": "llama-3.1-8b", "task": "inference", "lora_targets": [0]}, "lora_targets"),
        # JSON types as the schema states them (DRF read 0 as false and "16" as 16).
        ({"model": "gpt2", "flash_attention": 0}, "flash_attention"),
        ({"model": "gpt2", "batch_size": "16"}, "batch_size"),
        ({"model": "gpt2", "tensor_parallel": "2"}, "tensor_parallel"),
        ({"model": "gpt2", "task": 1}, "task"),
        ({"model": "llama-3.1-8b", "task": "full", "weight_dtype": "int4"}, "task"),
    ],
)
def test_bad_requests_are_400_naming_the_field(api, payload, field):
    response = api.post(URL, payload, format="json")
    assert response.status_code == 400
    assert field in response.json()


def test_the_schema_documents_the_sizing_endpoint_with_examples(api):
    schema = api.get("/api/schema/", {"format": "json"}).json()
    operation = schema["paths"]["/api/v1/advice/sizing"]["post"]
    examples = operation["requestBody"]["content"]["application/json"]["examples"]
    assert len(examples) >= 2


def test_bundled_models_are_listed(api):
    rows = api.get("/api/v1/advice/models").json()["results"]
    assert {"llama-3.1-70b", "mixtral-8x7b-v0.1", "t5-base"} <= {row["slug"] for row in rows}


def test_size_command_json_has_the_fields_scripts_use(catalog):
    out = StringIO()
    call_command("size", "--model", "llama-3.1-8b", "--task", "inference", "--json", stdout=out)
    body = json.loads(out.getvalue())
    assert body["model"]["params_total"] == 8_030_261_248
    assert body["model"]["kv_bytes_per_token"] == 131_072
    assert {"gpu", "gpu_count", "fits", "reason", "usd_per_hour"} <= set(body["candidates"][0])
    assert body["assumptions"] and body["memory"]["weights"] > 0


def test_size_command_accepts_a_config_file_and_a_bare_parameter_count(catalog, tmp_path):
    config = tmp_path / "config.json"
    config.write_text((MODELS_DIR / "gpt2.json").read_text())
    out = StringIO()
    call_command("size", "--config", str(config), "--context-tokens", "512", "--json", stdout=out)
    assert json.loads(out.getvalue())["model"]["params_total"] == 124_439_808
    out = StringIO()
    call_command("size", "--params", "13e9", "--task", "full", "--zero-stage", "3", stdout=out)
    assert "13,000,000,000 parameters" in out.getvalue()


def test_size_command_reports_bad_input_as_a_command_error(catalog):
    with pytest.raises(CommandError, match="context_tokens"):
        call_command("size", "--model", "gpt2", "--context-tokens", "0")


def test_a_context_beyond_learned_positions_is_refused_naming_the_field(api):
    response = api.post(URL, {"model": "gpt2", "context_tokens": 4096}, format="json")
    assert response.status_code == 400
    assert "1,024 learned positions" in response.json()["context_tokens"][0]


def test_a_context_beyond_a_rope_models_configured_length_is_flagged_not_refused(api):
    body = api.post(URL, {"model": "llama-2-7b", "context_tokens": 16384}, format="json").json()
    assert any("beyond the 4,096" in line for line in body["assumptions"])


def test_an_uploaded_config_keeps_its_own_name(api):
    config = {
        **json.loads((MODELS_DIR / "qwen2.5-7b.json").read_text()),
        "_name_or_path": "acme/qwen-finetune",
    }
    body = api.post(URL, {"config": config}, format="json").json()
    assert body["model"]["name"] == "acme/qwen-finetune"


def test_an_encoder_is_priced_per_million_tokens_encoded(api):
    body = api.post(
        URL,
        {"model": "bert-base-uncased", "context_tokens": 512, "batch_size": 64},
        format="json",
    ).json()
    best = body["recommendation"]
    assert best["usd_per_million_tokens"]["expected"] > 0
    assert best["usd_per_million_tokens_counts"] == "input tokens encoded"


def test_every_memory_line_and_the_total_carry_their_low_and_high(api):
    """Before: the README said every line has a range; the API gave only expected bytes."""
    body = api.post(URL, {"model": "llama-3.1-8b", "task": "lora"}, format="json").json()
    best = body["recommendation"]
    lines = best["memory_range"]
    assert set(lines) == set(best["memory"]) | {"total"}
    for name, expected in best["memory"].items():
        line = lines[name]
        assert line["low"] <= line["expected"] <= line["high"]
        assert abs(line["expected"] - expected) <= 1
    total = lines["total"]
    assert total["low"] == pytest.approx(sum(lines[n]["low"] for n in best["memory"]), abs=9)
    assert total["high"] == pytest.approx(sum(lines[n]["high"] for n in best["memory"]), abs=9)
    assert total["low"] < best["memory_per_gpu_bytes"] < total["high"]
    for candidate in body["candidates"]:
        spread = candidate["memory_per_gpu_range"]
        assert spread["low"] < candidate["memory_per_gpu_bytes"] < spread["high"]
    assert body["memory_range"]["total"]["expected"] == sum(body["memory"].values())


def test_the_page_shows_the_memory_lines_with_their_ranges(web):
    page = web.get("/size/", {"model": "llama-3.1-8b", "task": "lora"}).content.decode()
    start = page.index('id="memory-lines"')
    table = page[start : page.index("</details>", start)]
    assert "Weights" in table and "Total" in table and "–" in table
