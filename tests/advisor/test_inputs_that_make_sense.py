"""Inputs that make sense: nonsense is a 400 naming the setting, a sensible default is stated.

Each case is asked of the API, the sizing page and `manage.py size`: the domain decides
(Workload.validate, architecture_from_params, the config readers through unread_fields), so
the three give the same answer. Before this change every case here was answered silently:
7e9 parameters at hidden size 100 became 58,333 layers; 1,000 KV heads were taken for 32
attention heads; fp16 weights got a bf16 KV cache (and were refused on GPUs without BF16);
GPT-2 and BERT were refused at the default 4,096-token context; QLoRA in fp32 and full
fine-tuning in fp8 were sized; a config.json field no reader knows was dropped unseen.
"""

import html
import json
import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from advisor.domain.sizing.architecture import UnsupportedArchitecture, architecture_from_params
from advisor.domain.sizing.bundled_models import bundled_models
from advisor.domain.sizing.precision import Dtype
from advisor.domain.sizing.workload import Task, Workload
from tests.helpers import bundled_config as bundled
from tests.helpers import page_errors

API = "/api/v1/advice/sizing"
PAGE = "/size/"
NO_BF16_KV = "has no BF16 support: choose an fp16 KV cache"


def page_text(response) -> str:
    return html.unescape(response.content.decode())


def size_json(**options) -> dict:
    """`size --json`, listing every candidate, those that do not run included."""
    out = StringIO()
    call_command(
        "size", "--json", "--include-rejected", "--max-candidates=0", stdout=out, **options
    )
    return json.loads(out.getvalue())


EVERY = {"include_rejected": True, "max_candidates": 0}


# Refusals: (API body, page form, `size` options, the field named, the message) ----------------

REFUSED = {
    "params-7e9-hidden-100": (
        {"params": 7_000_000_000, "hidden_size": 100},
        {"source": "params", "params": "7000000000", "hidden_size": "100"},
        {"params": 7e9, "hidden_size": 100},
        "params",
        "gives 58,333 layers of hidden size 100",
    ),
    "params-7e9-2-layers-of-4096": (
        {"params": 7_000_000_000, "num_layers": 2, "hidden_size": 4096},
        {"source": "params", "params": "7000000000", "num_layers": "2", "hidden_size": "4096"},
        {"params": 7e9, "num_layers": 2, "hidden_size": 4096},
        "params",
        "num_layers=2 and hidden_size=4,096 make about 4.03e+08 parameters",
    ),
    "kv-heads-1000-of-32": (
        {"params": 7_000_000_000, "hidden_size": 4096, "num_kv_heads": 1000},
        {"source": "params", "params": "7000000000", "hidden_size": "4096", "num_kv_heads": "1000"},
        {"params": 7e9, "hidden_size": 4096, "num_kv_heads": 1000},
        "params",
        "num_kv_heads=1,000 does not divide the 32 attention heads",
    ),
    "qlora-fp32": (
        {"model": "llama-3.1-8b", "task": "qlora", "weight_dtype": "fp32"},
        {"model": "llama-3.1-8b", "task": "qlora", "weight_dtype": "fp32"},
        {"model": "llama-3.1-8b", "task": "qlora", "weight_dtype": "fp32"},
        "task",
        "QLoRA keeps the base in 4-bit NF4 and computes in bf16/fp16: weight_dtype fp32 is not "
        "a QLoRA setting; use bf16",
    ),
    "full-fp8": (
        {"model": "llama-3.1-8b", "task": "full", "weight_dtype": "fp8"},
        {"model": "llama-3.1-8b", "task": "full", "weight_dtype": "fp8"},
        {"model": "llama-3.1-8b", "task": "full", "weight_dtype": "fp8"},
        "task",
        "full fine-tuning in fp8 weights is not supported by mainstream stacks; use bf16 "
        "(mixed precision)",
    ),
    "lora-int4-points-at-qlora-in-bf16": (
        {"model": "llama-3.1-8b", "task": "lora", "weight_dtype": "int4"},
        {"model": "llama-3.1-8b", "task": "lora", "weight_dtype": "int4"},
        {"model": "llama-3.1-8b", "task": "lora", "weight_dtype": "int4"},
        "task",
        "training from int4 weights is QLoRA: choose task=qlora (with weight_dtype bf16",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_nonsense_is_a_400_from_the_api_naming_the_setting(api, case):
    body, _, _, field, message = REFUSED[case]
    response = api.post(API, body, format="json")
    assert response.status_code == 400, response.content[:300]
    assert message in response.json()[field][0]


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_nonsense_is_a_400_on_the_page_with_the_same_message(web, case):
    _, form, _, field, message = REFUSED[case]
    response = web.post(PAGE, form)
    assert response.status_code == 400
    assert message in page_errors(response, field)


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_nonsense_fails_size_with_the_same_message(catalog, case):
    _, _, options, _, message = REFUSED[case]
    with pytest.raises(CommandError, match=re.escape(message)):
        call_command("size", stdout=StringIO(), **options)


# Derived shapes are stated, each with what it came from --------------------------------------


def test_a_derived_layer_count_says_what_it_was_derived_from(api, web, catalog):
    said = "35 layers derived from params=7,000,000,000 and hidden size 4,096"
    body = api.post(API, {"params": 7_000_000_000, "hidden_size": 4096}, format="json").json()
    assert any(said in line for line in body["assumptions"])
    page = web.get(PAGE, {"source": "params", "params": "7000000000", "hidden_size": "4096"})
    assert said in page_text(page)
    assert any(said in line for line in size_json(params=7e9, hidden_size=4096)["assumptions"])


def test_a_mixture_of_experts_counted_as_dense_is_still_accepted():
    # Mixtral 8x7B: 46.7e9 parameters over 32 layers of 4,096 (7.3x 12·L·h²).
    arch = architecture_from_params(46_700_000_000, num_layers=32, hidden_size=4096, num_kv_heads=8)
    assert arch.kv_bytes_per_token(2) == 2 * 32 * 8 * 128 * 2


def test_a_depth_derived_from_a_layer_count_is_refused_when_no_model_is_that_wide():
    with pytest.raises(UnsupportedArchitecture, match="gives 4 layers of hidden size 12,096"):
        architecture_from_params(7_000_000_000, num_layers=4)


# The KV dtype follows the weights -------------------------------------------------------------


def test_fp16_weights_get_an_fp16_kv_cache_and_run_on_gpus_without_bf16(api, web, catalog):
    body = api.post(
        API, {"model": "llama-3.1-8b", "weight_dtype": "fp16", **EVERY}, format="json"
    ).json()
    assert not any(NO_BF16_KV in c["reason"] for c in body["candidates"])
    assert any("KV cache fp16: the weights' dtype" in line for line in body["assumptions"])
    # The catalogue has a GPU without BF16: asked for, a bf16 cache is still refused there.
    asked = api.post(
        API,
        {"model": "llama-3.1-8b", "weight_dtype": "fp16", "kv_dtype": "bf16", **EVERY},
        format="json",
    ).json()
    assert any(NO_BF16_KV in c["reason"] for c in asked["candidates"])
    page = web.get(PAGE, {"model": "llama-3.1-8b", "weight_dtype": "fp16"})
    assert page.status_code == 200
    assert NO_BF16_KV not in page_text(page)
    answer = size_json(model="llama-3.1-8b", weight_dtype="fp16")
    assert not any(NO_BF16_KV in c["reason"] for c in answer["candidates"])


@pytest.mark.parametrize(
    ("weights", "kv"),
    [
        ("fp32", "fp32"),
        ("bf16", "bf16"),
        ("fp16", "fp16"),
        ("fp8", "bf16"),
        ("int8", "bf16"),
        ("int4", "bf16"),
    ],
)
def test_the_kv_dtype_defaults_to_the_weights_and_8_or_4_bit_weights_to_bf16(weights, kv):
    workload = Workload(
        bundled_models()["llama-3.1-8b"].architecture(), weight_dtype=Dtype(weights)
    )
    assert workload.kv_dtype == kv
    assert any(note.startswith(f"KV cache {kv}: ") for note in workload.notes)


def test_an_explicit_kv_dtype_is_kept_and_not_restated():
    arch = bundled_models()["llama-3.1-8b"].architecture()
    workload = Workload(arch, weight_dtype=Dtype.INT4, kv_dtype=Dtype.FP8)
    assert workload.kv_dtype is Dtype.FP8
    assert not any(note.startswith("KV cache") for note in workload.notes)
    # with_changes keeps what was derived, without stating it twice.
    changed = Workload(arch, weight_dtype=Dtype.FP16).with_changes(batch_size=8)
    assert changed.kv_dtype is Dtype.FP16
    assert sum(note.startswith("KV cache") for note in changed.notes) == 1


# The default context fits the model ----------------------------------------------------------

CONTEXTS = {
    "gpt2": (768, "context 768 tokens: GPT-2 has 1,024 positions less the 256 generated tokens"),
    "bert-base-uncased": (512, "context 512 tokens: BERT base has 512 positions"),
}


@pytest.mark.parametrize("slug", sorted(CONTEXTS))
def test_the_default_context_is_the_models_positions_when_fewer_and_said(api, web, catalog, slug):
    tokens, said = CONTEXTS[slug]
    body = api.post(API, {"model": slug}, format="json").json()
    assert body["workload"]["context_tokens"] == tokens, body
    assert any(said in line for line in body["assumptions"])
    page = web.get(PAGE, {"model": slug})
    assert page.status_code == 200
    assert said in page_text(page)
    answer = size_json(model=slug)
    assert answer["workload"]["context_tokens"] == tokens
    assert any(said in line for line in answer["assumptions"])


def test_the_default_context_is_4096_for_a_long_context_model():
    workload = Workload(bundled_models()["llama-3.1-8b"].architecture())
    assert workload.context_tokens == 4096
    assert "context 4,096 tokens (context_tokens not given)" in workload.notes


def test_a_pretrain_in_fp8_is_still_sized():
    Workload(
        bundled_models()["llama-3.1-8b"].architecture(), task=Task.PRETRAIN, weight_dtype=Dtype.FP8
    ).validate()


# Unknown config.json fields: refused when they can change a count, else ignored and said -------

UNKNOWN_REFUSED = {
    "a-new-moe-knob": ({"num_shared_experts": 2}, "num_shared_experts: the llama reader"),
    "a-new-attention-type": ({"attention_type": "linear"}, "attention_type: the llama reader"),
    "a-new-layer-count": ({"num_cross_layers": 4}, "num_cross_layers: the llama reader"),
}


@pytest.mark.parametrize("case", sorted(UNKNOWN_REFUSED))
def test_an_unknown_field_that_can_change_the_count_is_refused_by_name(api, web, tmp_path, case):
    extra, message = UNKNOWN_REFUSED[case]
    config = {**bundled("llama-3.1-8b"), **extra}
    response = api.post(API, {"config": config}, format="json")
    assert response.status_code == 400
    assert message in response.json()["config"][0]
    page = web.post(PAGE, {"source": "config", "config": json.dumps(config)})
    assert page.status_code == 400
    assert message in page_errors(page, "config")
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    with pytest.raises(CommandError, match=re.escape(message)):
        call_command("size", "--config", str(path), stdout=StringIO())


def test_an_unknown_field_that_cannot_change_the_count_is_ignored_and_said(api, web, tmp_path):
    config = {**bundled("llama-3.1-8b"), "my_serving_hint": "fast", "num_shared_experts": None}
    said = "config.json fields the llama reader does not use, ignored"
    body = api.post(API, {"config": config}, format="json").json()
    line = next(line for line in body["assumptions"] if said in line)
    assert "my_serving_hint" in line and "num_shared_experts" in line
    assert "initializer_range" not in line  # known count-neutral fields are not listed
    page = web.post(PAGE, {"source": "config", "config": json.dumps(config)})
    assert page.status_code == 200
    assert said in page_text(page)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    answer = size_json(config=path)
    assert any(said in line for line in answer["assumptions"])


def test_every_bundled_config_passes_the_unknown_field_check():
    for slug, model in bundled_models().items():
        assert model.architecture().params_total > 0, slug
