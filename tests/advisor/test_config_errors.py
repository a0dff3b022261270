"""A bad config.json gets the same 400 from the API, the sizing page and `manage.py size`.

The domain's architecture readers decide (see test_architecture_validation.py); the three
interfaces only relay the refusal. Before the fix the T5 config with "feed_forward_proj": [] was
a 400 on the page (a page-only catch-all) and a 500 on the API; 10**300 layers and deeply
nested config text were 500s everywhere.
"""

import json
import re
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from tests.helpers import bundled_config as bundled
from tests.helpers import page_errors

API = "/api/v1/advice/sizing"
PAGE = "/size/"


def nested(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


BAD_CONFIGS = {
    "t5-feed-forward-list": (
        {**bundled("t5-base"), "feed_forward_proj": []},
        "feed_forward_proj must be a string, got []",
    ),
    "layers-10e300": (
        {**bundled("llama-3.1-8b"), "num_hidden_layers": 10**300},
        "num_hidden_layers must be a positive integer of at most 10,000",
    ),
    "hidden-10e100": (
        {**bundled("llama-3.1-8b"), "hidden_size": 10**100},
        "hidden_size must be a positive integer of at most 1,048,576",
    ),
    "hidden-float-1e308": (
        {**bundled("llama-3.1-8b"), "hidden_size": 1e308},
        "hidden_size must be a positive integer of at most 1,048,576, got 1e+308",
    ),
    "layers-true": (
        {**bundled("llama-3.1-8b"), "num_hidden_layers": True},
        "num_hidden_layers must be a positive integer of at most 10,000, got True",
    ),
    "vocab-zero": (
        {**bundled("gpt2"), "vocab_size": 0},
        "vocab_size must be a positive integer of at most 10,000,000, got 0",
    ),
    "experts-negative": (
        {**bundled("mixtral-8x7b-v0.1"), "num_local_experts": -8},
        "num_local_experts must be a whole number from 0 to 100,000, got -8",
    ),
    "tie-as-text": (
        {**bundled("llama-3.1-8b"), "tie_word_embeddings": "no"},
        "tie_word_embeddings must be true or false, got 'no'",
    ),
}


def config_text(config: dict) -> str:
    # json.dumps writes NaN / Infinity / 1e+308 as Python's json module reads them back.
    return json.dumps(config)


@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_the_api_answers_400_naming_the_field(api, case):
    config, message = BAD_CONFIGS[case]
    response = api.post(API, config_text({"config": config}), content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    assert message in response.json()["config"][0]


def _assert_the_page_refuses(web, text: str, message: str) -> None:
    """`text` pasted, then uploaded as config.json: a 400 with `message` next to that field."""
    pasted = web.post(PAGE, {"source": "config", "config": text})
    assert pasted.status_code == 400
    assert message in page_errors(pasted, "config")
    upload = SimpleUploadedFile("config.json", text.encode(), "application/json")
    uploaded = web.post(PAGE, {"source": "config", "config_file": upload})
    assert uploaded.status_code == 400
    assert message in page_errors(uploaded, "config_file")


@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_the_page_answers_400_with_the_same_message(web, case):
    config, message = BAD_CONFIGS[case]
    _assert_the_page_refuses(web, config_text(config), message)


@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_size_fails_with_the_same_message(catalog, tmp_path, case):
    config, message = BAD_CONFIGS[case]
    path = tmp_path / "config.json"
    path.write_text(config_text(config))
    with pytest.raises(CommandError, match=re.escape(message)):
        call_command("size", "--config", str(path), stdout=StringIO())


def test_nan_and_infinity_in_a_config_are_refused_naming_the_field(api):
    text = config_text({**bundled("llama-3.1-8b"), "hidden_size": 1}).replace(
        '"hidden_size": 1', '"hidden_size": NaN'
    )
    response = api.post(API, {"config": text}, format="json")
    assert response.status_code == 400
    assert "hidden_size must be a positive integer" in response.json()["config"][0]


# Nesting: one limit, whichever way the config arrives -------------------------------------

DEPTHS = [1_000, 5_000]
TOO_DEEP = "nested too deeply (more than 64 levels)"


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_deep_config_string_in_a_json_body_is_a_400(api, depth):
    response = api.post(API, {"config": nested(depth)}, format="json")
    assert response.status_code == 400
    assert TOO_DEEP in response.json()["config"][0]


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("encoding", ["multipart", "urlencoded"])
def test_a_deep_config_in_a_form_encoded_api_request_is_a_400(api, depth, encoding):
    """Failed before the fix: DRF's JSONField decoded form text with json.loads, a
    RecursionError and a 500."""
    if encoding == "multipart":
        response = api.post(API, {"config": nested(depth)}, format="multipart")
    else:
        body = f"config={nested(depth)}"
        response = api.post(API, body, content_type="application/x-www-form-urlencoded")
    assert response.status_code == 400
    assert TOO_DEEP in response.json()["config"][0]


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_deep_config_object_in_the_body_is_a_400_parse_error(api, depth):
    body = '{"config": ' + nested(depth) + "}"
    response = api.post(API, body, content_type="application/json")
    assert response.status_code == 400
    assert TOO_DEEP in response.json()["detail"]


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_deep_config_on_the_page_is_a_400_next_to_its_field(web, depth):
    _assert_the_page_refuses(web, nested(depth), TOO_DEEP)


@pytest.mark.parametrize("depth", DEPTHS)
def test_size_refuses_a_deep_config_file(catalog, tmp_path, depth):
    path = tmp_path / "config.json"
    path.write_text(nested(depth))
    with pytest.raises(CommandError, match=re.escape(TOO_DEEP)):
        call_command("size", "--config", str(path), stdout=StringIO())


def test_an_integer_too_long_to_read_is_a_400_not_a_500(api):
    """Python refuses to read integers of more than 4,300 digits (a ValueError that is no
    JSONDecodeError): before the fix, a 500."""
    response = api.post(
        API, {"config": '{"model_type": "llama", "hidden_size": ' + "9" * 5000 + "}"}, format="json"
    )
    assert response.status_code == 400
    assert "not valid JSON" in response.json()["config"][0]


def test_a_config_at_every_limit_is_answered_never_a_500(api):
    """The largest values each field accepts, together: a refusal of the whole (beyond ten
    trillion parameters), not an overflow anywhere in the engine."""
    config = {
        **bundled("llama-3.1-8b"),
        "num_hidden_layers": 10_000,
        "hidden_size": 1_048_576,
        "intermediate_size": 4_194_304,
        "vocab_size": 10_000_000,
        "max_position_embeddings": 100_000_000,
    }
    response = api.post(API, {"config": config}, format="json")
    assert response.status_code == 400
    assert "largest model accepted" in response.json()["config"][0]


def test_a_large_but_possible_config_is_sized(api):
    config = {**bundled("llama-3.1-8b"), "num_hidden_layers": 2_000}
    response = api.post(API, {"config": config, "task": "full"}, format="json")
    assert response.status_code == 200, response.content[:300]
    assert response.json()["model"]["params_total"] == 8_030_261_248 + (2_000 - 32) * 218_112_000
