"""The API's JSON renderer (config/renderers.py) writes what DRF's own renderer writes, faster:
the same document for every kind of answer, and DRF's renderer where msgspec cannot."""

import json
import math
from decimal import Decimal

import pytest
from rest_framework.renderers import JSONRenderer
from rest_framework.test import APIClient

from config import renderers
from config.renderers import FastJSONRenderer


@pytest.fixture
def api() -> APIClient:
    return APIClient()


def same_document(data) -> None:
    fast = FastJSONRenderer().render(data)
    assert json.loads(fast) == json.loads(JSONRenderer().render(data))


@pytest.mark.django_db
@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/gpus/",
        "/api/v1/gpus/H100-SXM/",
        "/api/v1/offers/?page_size=20",
        "/api/v1/gpus/nope/",
    ],
)
def test_catalogue_answers_and_errors_are_the_same_document_drf_writes(api, catalog, path):
    response = api.get(path)
    same_document(response.data)
    # Hyperlinks (a str subclass) and decimals are written by msgspec itself, not handed back.
    renderers._ENCODER.encode(response.data)


@pytest.mark.django_db
def test_a_sizing_answer_is_the_same_document_drf_writes(api, catalog):
    response = api.post(
        "/api/v1/advice/sizing", {"model": "llama-3.1-8b", "task": "lora"}, format="json"
    )
    assert response.status_code == 200
    same_document(response.data)
    assert json.loads(response.content) == json.loads(JSONRenderer().render(response.data))


def test_decimals_are_numbers_and_nan_is_null_rather_than_drfs_500():
    assert json.loads(FastJSONRenderer().render({"price": Decimal("1.25")})) == {"price": 1.25}
    assert json.loads(FastJSONRenderer().render({"x": math.nan})) == {"x": None}
    with pytest.raises(ValueError):  # DRF's strict renderer: a 500 in a view
        JSONRenderer().render({"x": math.nan})


def test_an_indented_answer_goes_through_drfs_renderer():
    indented = FastJSONRenderer().render({"a": [1]}, "application/json; indent=2")
    assert indented == JSONRenderer().render({"a": [1]}, "application/json; indent=2")
    assert b"\n" in indented


def test_line_separators_are_escaped_as_drf_escapes_them():
    data = {"text": "a\u2028b\u2029c é"}
    assert FastJSONRenderer().render(data) == JSONRenderer().render(data)
