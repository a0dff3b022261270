"""POST /api/v1/advice/sizing as a multipart or urlencoded form: an empty field is null."""

from urllib.parse import urlencode

import pytest

URL = "/api/v1/advice/sizing"


@pytest.mark.parametrize("form_format", ["multipart", None])
def test_empty_nullable_fields_in_a_form_are_null(api, form_format):
    """Before: an empty `config` was a 400 ("Value must be valid JSON"), though the schema
    says a form sends null as an empty value, as DRF reads every other nullable field."""
    form = {
        "model": "llama-3.1-8b",
        "config": "",
        "params": "",
        "zero_stage": "",
        "concurrent_users": "",
        "train_tokens": "",
    }
    if form_format is None:
        response = api.post(URL, urlencode(form), content_type="application/x-www-form-urlencoded")
    else:
        response = api.post(URL, form, format=form_format)
    assert response.status_code == 200, response.content
    assert response.json()["candidates"]


def test_a_config_sent_as_form_text_is_still_read_as_json(api):
    config = (
        '{"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, '
        '"num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, '
        '"vocab_size": 128256}'
    )
    response = api.post(URL, {"config": config}, format="multipart")
    assert response.status_code == 200, response.content
