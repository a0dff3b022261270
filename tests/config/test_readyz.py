"""/readyz: the database, the cache and the broker, each reported; 200 only when all answer, 503
within about READYZ_TIMEOUT_S when one is down or hung. /healthz stays a liveness check."""

import time
from collections.abc import Iterator

import pytest

from config.health import readiness_forget
from tests.helpers import (
    RedisServer,
    cache_settings,
    celery_broker,
    free_port,
    needs_redis_server,
    running_redis,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def every_probe_checks(settings):
    """These tests change a service between two probes: none reuses an answer unless it says."""
    settings.READYZ_CACHE_S = 0
    readiness_forget()
    yield
    readiness_forget()


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    with running_redis() as server:
        yield server


def test_readyz_is_200_when_database_cache_and_broker_answer(client, settings):
    response = client.get("/readyz")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"] == "ok" and body["cache"] == "ok"
    in_process = "not used (tasks run in-process)"
    assert body["broker"] == ("ok" if settings.CELERY_BROKER_URL else in_process)


@needs_redis_server
def test_readyz_names_a_stopped_cache_and_broker_and_answers_503_quickly(
    client, settings, redis_server
):
    settings.CACHES = cache_settings(redis_server.url(0), settings)
    settings.CELERY_TASK_ALWAYS_EAGER = False
    with celery_broker(redis_server.url(1), settings):
        assert client.get("/readyz").status_code == 200
        redis_server.stop()
        started = time.monotonic()
        response = client.get("/readyz")
        elapsed_s = time.monotonic() - started
    assert response.status_code == 503
    assert response.json() == {
        "status": "error",
        "database": "ok",
        "cache": "error (ConnectionError)",
        "broker": "error (OperationalError)",
    }
    assert elapsed_s < 1.5
    assert "127.0.0.1" not in response.content.decode()  # no addresses to the outside


@needs_redis_server
def test_readyz_answers_503_within_its_timeout_when_the_cache_and_broker_hang(
    client, settings, redis_server
):
    settings.CACHES = cache_settings(redis_server.url(0), settings)
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.READYZ_TIMEOUT_S = 1.0
    with celery_broker(redis_server.url(1), settings):
        redis_server.freeze()
        try:
            started = time.monotonic()
            response = client.get("/readyz")
            elapsed_s = time.monotonic() - started
        finally:
            redis_server.thaw()
    assert response.status_code == 503
    body = response.json()
    assert body["database"] == "ok"
    assert body["cache"] != "ok" and body["broker"] != "ok"
    assert elapsed_s < 1.5


def test_healthz_does_not_depend_on_the_cache(client, settings):
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:9/0",  # nothing listens on port 9
        }
    }
    assert client.get("/healthz").status_code == 200


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_a_database_that_refuses_is_a_503_that_names_the_failure_by_its_kind_only(client, path):
    """Before: /healthz answered the driver's message, with the database host and user."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("points PostgreSQL at a closed port")
    real = dict(connection.settings_dict)
    connection.close()
    connection.settings_dict.update(HOST="127.0.0.1", PORT=str(free_port()))
    try:
        response = client.get(path)
    finally:
        connection.close()
        connection.settings_dict.update(real)
    assert response.status_code == 503
    assert response.json()["database"] == "error (OperationalError)"
    assert "127.0.0.1" not in response.content.decode()


@needs_redis_server
def test_thirty_probes_during_a_frozen_cache_cost_one_timeout_not_thirty(
    client, settings, redis_server
):
    """Before: each probe held its worker for READYZ_TIMEOUT_S while Redis hung."""
    settings.CACHES = cache_settings(redis_server.url(0), settings)
    settings.READYZ_TIMEOUT_S = 1.0
    settings.READYZ_CACHE_S = 2.0
    redis_server.freeze()
    try:
        started = time.monotonic()
        answers = [client.get("/readyz") for _ in range(30)]
        elapsed_s = time.monotonic() - started
    finally:
        redis_server.thaw()
    assert {answer.status_code for answer in answers} == {503}
    assert elapsed_s < 1.0 + 1.0, elapsed_s
    assert answers[0]["Age"] == "0" and all("Age" in answer for answer in answers)


def test_a_reused_answer_is_checked_again_after_its_time(client, settings):
    settings.READYZ_CACHE_S = 0.3
    assert client.get("/readyz").status_code == 200
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:9/0",  # nothing listens on port 9
        }
    }
    assert client.get("/readyz").status_code == 200  # the answer of a moment ago
    time.sleep(0.35)
    assert client.get("/readyz").status_code == 503
