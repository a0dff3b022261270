"""advisor/hub.py: the real huggingface_hub code against the loopback Hub (hub_server.py).

No mock of the library and no network: every request goes to 127.0.0.1. Each case was a 500, a
hang or unsupported before the adapter existed (a Hub id was not a `model` at all).
"""

import logging
import socket
import time

import pytest
from django.core.cache import cache

from advisor.domain.sizing.bundled_models import bundled_models
from advisor.domain.sizing.hub_ids import InvalidHubId, parse_hub_ref
from advisor.domain.sizing.stored_weights import stored_weights_compare
from advisor.hub import HubError, hub_model_read
from tests.advisor.hub_server import (
    GPT_OSS_20B_TOTAL_SIZE,
    LLAMA_3_1_8B_TOTAL_SIZE,
    bundled_config,
    commit_of,
    recorded_hub,
)

TOKEN = "hf_test_token_with_access"


@pytest.fixture
def hub(settings, tmp_path):
    server = recorded_hub()
    settings.HF_ENDPOINT = server.start()
    settings.HF_TOKEN = None
    settings.HF_HUB_CACHE_DIR = tmp_path / "hf"
    settings.HUB_TIMEOUT_S = 1.0
    settings.HUB_MAX_CONFIG_BYTES = 1024 * 1024
    cache.clear()
    yield server
    server.stop()
    cache.clear()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _code(ref: str) -> str:
    with pytest.raises(HubError) as caught:
        hub_model_read(ref=parse_hub_ref(ref))
    return caught.value.code


@pytest.mark.parametrize(
    "text",
    ["Qwen/Qwen3-8B", "Qwen/Qwen3-8B@9c925d6", "meta-llama/Llama-3.1-8B@refs/pr/1", "a_b/c.d-e"],
)
def test_hub_ids_the_hub_accepts_parse(text):
    ref = parse_hub_ref(text)
    assert str(ref) == text


@pytest.mark.parametrize(
    "text",
    [
        "gpt2",  # no owner
        "a/b/c",
        "../etc/passwd",
        "owner/na me",
        "owner/name?x=1",
        "owner/-name",
        "own--er/name",
        "owner/name@",
        "owner/name@a..b",
        "owner/" + "n" * 100,
        "http://evil/x",
    ],
)
def test_malformed_hub_ids_are_refused_before_any_request(hub, text):
    with pytest.raises(InvalidHubId):
        hub_model_read(ref=parse_hub_ref(text))
    assert hub.requests == []


def test_a_public_model_is_read_with_its_commit_and_stored_weight_size(hub):
    model = hub_model_read(ref=parse_hub_ref("test-org/llama-copy"))
    assert model.config["model_type"] == "llama"
    assert model.commit == commit_of("test-org/llama-copy")
    assert model.stored_weight_bytes == LLAMA_3_1_8B_TOTAL_SIZE
    assert model.source()["revision"] == "main"
    # The recorded index agrees with the engine's count of the same config, to the byte.
    arch = bundled_models()["llama-3.1-8b"].architecture()
    weights = stored_weights_compare(arch, model.config, model.stored_weight_bytes)
    assert weights.computed_bytes == LLAMA_3_1_8B_TOTAL_SIZE
    assert not weights.differs


def test_a_quantised_checkpoint_is_compared_with_its_stored_bytes_not_bf16(hub):
    """Before: params x 2 bytes for gpt-oss-20b (MXFP4 experts) was a false 'differs'."""
    model = hub_model_read(ref=parse_hub_ref("test-org/gpt-oss-20b-copy"))
    arch = bundled_models()["gpt-oss-20b"].architecture()
    weights = stored_weights_compare(arch, model.config, model.stored_weight_bytes)
    assert weights.stored_bytes == GPT_OSS_20B_TOTAL_SIZE
    assert weights.computed_bytes == GPT_OSS_20B_TOTAL_SIZE
    assert not weights.differs
    assert "mxfp4" in weights.computed_as


def test_a_model_without_a_weight_index_has_no_stored_size(hub):
    model = hub_model_read(ref=parse_hub_ref("openai-community/gpt2"))
    assert model.stored_weight_bytes is None
    assert model.config["n_layer"] == 12


def test_a_revision_pins_the_commit(hub):
    commit = commit_of("test-org/llama-copy")
    model = hub_model_read(ref=parse_hub_ref(f"test-org/llama-copy@{commit[:7]}"))
    assert model.commit == commit
    assert model.requested_revision == commit[:7]
    assert any(f"/resolve/{commit[:7]}/config.json" in path for _, path, _ in hub.requests)


def test_an_unknown_revision_says_so(hub):
    assert _code("test-org/llama-copy@v9.9") == "unknown_revision"


def test_an_unknown_model_says_not_found(hub, settings):
    settings.HF_TOKEN = "hf_some_token"
    assert _code("test-org/no-such-model") == "not_found"


def test_a_private_model_without_a_token_says_private(hub):
    with pytest.raises(HubError) as caught:
        hub_model_read(ref=parse_hub_ref("test-org/private-model"))
    assert caught.value.code == "not_found_or_private"
    assert "private" in str(caught.value) and "HF_TOKEN" in str(caught.value)


def test_a_private_model_with_its_token_is_read(hub, settings):
    settings.HF_TOKEN = TOKEN
    assert hub_model_read(ref=parse_hub_ref("test-org/private-model")).config["model_type"]


def test_a_gated_model_without_a_token_says_gated(hub):
    with pytest.raises(HubError) as caught:
        hub_model_read(ref=parse_hub_ref("meta-llama/Llama-3.1-8B@main"))
    assert caught.value.code == "gated"
    assert "needs HF_TOKEN" in str(caught.value)


def test_a_gated_model_with_a_token_without_access_says_so(hub, settings):
    settings.HF_TOKEN = "hf_token_without_access"
    with pytest.raises(HubError) as caught:
        hub_model_read(ref=parse_hub_ref("meta-llama/Llama-3.1-8B@main"))
    assert caught.value.code == "gated"
    assert "has no access" in str(caught.value)


def test_the_token_is_sent_to_the_endpoint_and_never_logged_or_cached(hub, settings, caplog):
    settings.HF_TOKEN = TOKEN
    caplog.set_level(logging.DEBUG)
    model = hub_model_read(ref=parse_hub_ref("meta-llama/Llama-3.1-8B@main"))
    assert model.stored_weight_bytes == LLAMA_3_1_8B_TOTAL_SIZE
    assert {auth for _, _, auth in hub.requests} == {f"Bearer {TOKEN}"}
    assert TOKEN not in caplog.text
    assert TOKEN not in repr(model) and TOKEN not in str(model.source())


def test_no_token_from_the_environment_is_sent(hub, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_from_the_environment")
    hub_model_read(ref=parse_hub_ref("test-org/llama-copy"))
    assert {auth for _, _, auth in hub.requests} == {None}


def test_the_hub_unreachable_says_offline_at_once(hub, settings):
    settings.HF_ENDPOINT = f"http://127.0.0.1:{_closed_port()}"
    started = time.monotonic()
    assert _code("test-org/llama-copy") == "offline"
    assert time.monotonic() - started < 5


def test_a_hub_that_does_not_answer_times_out(hub, settings):
    settings.HUB_TIMEOUT_S = 0.5
    started = time.monotonic()
    assert _code("test-org/hanging") == "offline"
    assert time.monotonic() - started < 5


def test_an_oversized_config_is_refused_before_it_is_downloaded(hub):
    assert _code("test-org/oversized") == "too_large"
    assert [method for method, _, _ in hub.requests] == ["HEAD"]


def test_a_repository_without_a_config_says_so(hub):
    assert _code("test-org/no-config") == "no_config"


def test_a_config_that_is_not_json_says_so(hub):
    assert _code("test-org/not-json") == "invalid_config"


def test_a_second_read_comes_from_the_cache_without_a_request(hub):
    ref = parse_hub_ref("test-org/llama-copy")
    first = hub_model_read(ref=ref)
    count = len(hub.requests)
    assert hub_model_read(ref=ref) == first
    assert len(hub.requests) == count


def test_offline_the_disk_cache_under_var_dir_answers(hub, settings):
    ref = parse_hub_ref("test-org/llama-copy")
    first = hub_model_read(ref=ref)
    assert (settings.HF_HUB_CACHE_DIR / "models--test-org--llama-copy").is_dir()
    cache.clear()
    settings.HF_ENDPOINT = f"http://127.0.0.1:{_closed_port()}"
    again = hub_model_read(ref=ref)
    assert again.config == first.config and again.commit == first.commit


def test_the_served_config_is_the_bundled_one_byte_for_byte(hub):
    model = hub_model_read(ref=parse_hub_ref("openai-community/gpt2@main"))
    assert model.config == bundled_models()["gpt2"].config
    assert bundled_config("gpt2")
