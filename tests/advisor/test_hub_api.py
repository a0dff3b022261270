"""A Hugging Face Hub id as `model`: the API, `manage.py size` and the page, against the loopback
Hub (tests/advisor/hub_server.py), and GET /api/v1/advice/models.

Before: `model` took only a bundled slug, so every Hub id was a 400 "not a valid choice" and the
models list had no family, year, licence or context length.
"""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from advisor.domain.sizing.bundled_models import bundled_models
from tests.advisor.hub_server import LLAMA_3_1_8B_TOTAL_SIZE, commit_of, recorded_hub

URL = "/api/v1/advice/sizing"
TOKEN = "hf_test_token_with_access"


@pytest.fixture
def hub(settings, tmp_path):
    server = recorded_hub()
    settings.HF_ENDPOINT = server.start()
    settings.HF_HUB_CACHE_DIR = tmp_path / "hf"
    settings.HUB_TIMEOUT_S = 1.0
    yield server
    server.stop()


def _size(api: APIClient, model: str, **fields) -> tuple[int, dict]:
    response = api.post(URL, {"model": model, **fields}, format="json")
    return response.status_code, response.json()


def test_a_hub_id_is_sized_from_the_hubs_config_and_says_where_it_came_from(api, hub):
    status, body = _size(api, "test-org/llama-copy")
    assert status == 200, body
    bundled = bundled_models()["llama-3.1-8b"].architecture()
    assert body["model"]["params_total"] == bundled.params_total
    source = body["model"]["source"]
    assert source["kind"] == "hub"
    assert source["hf_id"] == "test-org/llama-copy"
    assert source["revision"] == "main"
    assert source["commit"] == commit_of("test-org/llama-copy")
    assert source["weights"]["stored_bytes"] == LLAMA_3_1_8B_TOTAL_SIZE
    assert source["weights"]["computed_bytes"] == LLAMA_3_1_8B_TOTAL_SIZE
    assert source["weights"]["differs"] is False
    assert any("read from the Hugging Face Hub" in note for note in body["assumptions"])


def test_a_pinned_revision_is_what_the_answer_names(api, hub):
    commit = commit_of("test-org/llama-copy")
    status, body = _size(api, f"test-org/llama-copy@{commit[:7]}")
    assert status == 200, body
    assert body["model"]["source"]["revision"] == commit[:7]
    assert body["model"]["source"]["commit"] == commit


def test_a_stored_size_more_than_1_percent_off_is_a_warning(api, hub):
    status, body = _size(api, "test-org/mismatched-index")
    assert status == 200, body
    weights = body["model"]["source"]["weights"]
    assert weights["differs"] is True
    assert weights["stored_bytes"] == LLAMA_3_1_8B_TOTAL_SIZE
    assert weights["computed_bytes"] == 2 * body["model"]["params_total"]
    assert any(note.startswith("Warning: stored weights") for note in body["assumptions"])


def test_a_bundled_models_hub_id_means_the_bundled_config_with_no_request(api, hub):
    status, body = _size(api, "meta-llama/Llama-3.1-8B")
    assert status == 200, body
    assert body["model"]["source"] == {
        "kind": "bundled",
        "slug": "llama-3.1-8b",
        "hf_id": "meta-llama/Llama-3.1-8B",
        "source_url": bundled_models()["llama-3.1-8b"].source_url,
    }
    assert hub.requests == []


def test_a_bundled_slug_still_works(api, hub):
    status, body = _size(api, "llama-3.1-70b")
    assert status == 200
    assert body["model"]["source"]["kind"] == "bundled"
    assert hub.requests == []


@pytest.mark.parametrize(
    ("model", "words"),
    [
        ("no-such-slug", "not a bundled model"),
        ("owner/na me", "not a Hub model id"),
        ("../../etc/passwd", "not a Hub model id"),
        ("owner/name@", "must be followed by a revision"),
    ],
)
def test_a_malformed_model_is_a_400_before_any_request(api, hub, model, words):
    status, body = _size(api, model)
    assert status == 400
    assert words in " ".join(body["model"])
    assert hub.requests == []


@pytest.mark.parametrize(
    ("model", "words"),
    [
        ("meta-llama/Llama-3.1-8B@main", "is gated: it needs HF_TOKEN"),
        ("test-org/private-model", "or is private"),
        ("test-org/no-such-model", "is not on the Hub"),
        ("test-org/llama-copy@v9", "has no revision"),
        ("test-org/oversized", "HUB_MAX_CONFIG_BYTES"),
        ("test-org/no-config", "has no config.json"),
        ("test-org/hanging", "did not answer within"),
    ],
)
def test_each_hub_failure_is_a_400_that_says_which(api, hub, settings, model, words):
    settings.HUB_TIMEOUT_S = 0.5
    status, body = _size(api, model)
    assert status == 400, body
    assert words in " ".join(body["model"])


def test_offline_is_a_400_that_says_so(api, settings):
    # tests/conftest.py points HF_ENDPOINT at loopback port 9, where nothing listens.
    status, body = _size(api, "test-org/llama-copy")
    assert status == 400
    assert "could not be reached" in " ".join(body["model"])


def test_a_gated_model_with_the_token_is_sized_and_the_token_is_in_no_answer(api, hub, settings):
    settings.HF_TOKEN = TOKEN
    response = api.post(URL, {"model": "meta-llama/Llama-3.1-8B@main"}, format="json")
    assert response.status_code == 200
    assert TOKEN not in response.content.decode()


def test_size_command_takes_a_hub_id(catalog, hub):
    out = StringIO()
    call_command("size", "--model", "test-org/llama-copy", stdout=out)
    text = out.getvalue()
    assert (
        f"from the Hub: test-org/llama-copy@main, commit {commit_of('test-org/llama-copy')}" in text
    )
    assert "stored weights 16,060,522,496 B" in text
    out = StringIO()
    call_command("size", "--model", "test-org/llama-copy", "--json", stdout=out)
    assert json.loads(out.getvalue())["model"]["source"]["kind"] == "hub"


def test_size_command_says_why_a_hub_id_failed(catalog, hub):
    with pytest.raises(CommandError, match="is gated"):
        call_command("size", "--model", "meta-llama/Llama-3.1-8B@main", stdout=StringIO())


def test_the_page_offers_bundled_names_and_hub_ids_and_sizes_a_hub_id(client, catalog, hub):
    page = client.get("/size/")
    html = page.content.decode()
    assert 'list="id_model_suggestions"' in html
    assert '<option value="llama-3.1-70b" label="Llama 3.1 70B">' in html
    assert '<option value="meta-llama/Llama-3.1-70B" label="Llama 3.1 70B">' in html
    answer = client.get("/size/", {"model": "test-org/llama-copy"})
    assert answer.status_code == 200
    source = model_source_of(answer.content.decode())
    assert "read from the Hugging Face Hub, test-org/llama-copy" in source
    assert commit_of("test-org/llama-copy")[:12] in source
    refused = client.get("/size/", {"model": "test-org/no-such-model"})
    assert refused.status_code == 400
    assert "is not on the Hub" in refused.content.decode()


def model_source_of(html: str) -> str:
    """The answer summary's statement of where the model's config came from."""
    start = html.index('<span class="model-source">')
    return html[start : html.index("</span>", start)]


def test_a_bundled_answer_says_it_used_the_bundled_copy_not_the_hub(client, catalog, hub):
    answer = client.get("/size/", {"model": "llama-3.1-8b"})
    source = model_source_of(answer.content.decode())
    assert "the bundled copy of" in source
    assert "meta-llama/Llama-3.1-8B" in source
    assert "Hugging Face Hub" not in source
    assert hub.requests == []


def test_the_models_list_says_family_year_licence_context_and_counts(client):
    rows = {row["slug"]: row for row in client.get("/api/v1/advice/models").json()["results"]}
    llama = rows["llama-3.1-8b"]
    assert llama["family"] == "llama"
    assert llama["release_year"] == 2024
    assert llama["license"] == "llama3.1"
    assert llama["context_length"] == 131072
    assert llama["params_total"] == 8_030_261_248
    assert rows["qwen2.5-72b"]["license"] == "qwen"
    assert rows["mixtral-8x7b-v0.1"]["params_active"] < rows["mixtral-8x7b-v0.1"]["params_total"]
    assert rows["t5-base"]["context_length"] is None  # relative positions: no limit in the config
    for row in rows.values():
        assert set(row) >= {"family", "release_year", "license", "context_length"}
        assert row["release_year"] is None or 2018 <= row["release_year"] <= 2026
