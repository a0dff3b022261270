"""A model typed as people write it (issue 24): "Llama 3.1 70B" or "qwen3 32b" is the bundled
model; a near miss is a 400 that suggests the nearest names."""

import pytest

from advisor.domain.sizing.bundled_models import bundled_slug_for, nearest_bundled_slugs

URL = "/api/v1/advice/sizing"


@pytest.mark.parametrize(
    ("typed", "slug"),
    [
        ("Llama 3.1 70B", "llama-3.1-70b"),
        ("qwen3 32b", "qwen3-32b"),
        ("Llama-3.1-8B-Instruct", "llama-3.1-8b"),
        ("GPT OSS 20B", "gpt-oss-20b"),
        ("Mixtral 8x7B", "mixtral-8x7b-v0.1"),
        ("llama-3.1-70b", "llama-3.1-70b"),
    ],
)
def test_a_model_named_as_people_write_it_is_the_bundled_one(typed, slug):
    assert bundled_slug_for(typed) == slug


def test_a_near_miss_resolves_to_nothing_and_suggests_the_nearest():
    assert bundled_slug_for("lama 3 70b") is None
    assert "llama-3.1-70b" in nearest_bundled_slugs("lama 3 70b")
    assert nearest_bundled_slugs("an entirely different thing") == []


def test_the_api_sizes_a_model_typed_as_people_write_it(api):
    response = api.post(URL, {"model": "Llama 3.1 8B", "task": "inference"}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["model"]["source"]["slug"] == "llama-3.1-8b"


def test_the_api_suggests_the_nearest_names_for_a_near_miss(api):
    response = api.post(URL, {"model": "lama 3 70b", "task": "inference"}, format="json")
    assert response.status_code == 400
    (message,) = response.json()["model"]
    assert message.endswith("did you mean llama-3.3-70b or llama-3.1-70b or llama-2-70b?")
