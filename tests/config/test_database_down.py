"""With PostgreSQL unreachable, every /api/ answer is DRF's JSON error shape with Retry-After
(503) and every page a plain 503 page that needs no database. Before: Django's HTML 500 page
for both, and a database host that does not answer held each request without a time limit."""

import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.db import connection
from django.test import Client

from tests.helpers import free_port, make_team, token_client

pytestmark = pytest.mark.django_db(transaction=True)

API_CALLS = [
    ("get", "/api/v1/gpus/", None),
    ("get", "/api/v1/offers/?gpu=h100-sxm", None),
    ("post", "/api/v1/advice/sizing", {"model": "llama-3.1-8b"}),
]
PAGES = ["/", "/size/?model=llama-3.1-8b", "/offers/"]


@contextmanager
def database_at(port: int) -> Iterator[None]:
    if connection.vendor != "postgresql":
        pytest.skip("points PostgreSQL at another port")
    real = dict(connection.settings_dict)
    connection.close()
    connection.settings_dict.update(HOST="127.0.0.1", PORT=str(port))
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict.update(real)


@pytest.fixture
def database_refuses() -> Iterator[None]:
    with database_at(free_port()):
        yield


@pytest.mark.parametrize(("method", "path", "body"), API_CALLS)
def test_the_api_answers_503_json_with_retry_after(database_refuses, method, path, body):
    client = Client(raise_request_exception=False)
    response = getattr(client, method)(path, body, content_type="application/json")
    assert response.status_code == 503, response.content[:200]
    assert response["Content-Type"] == "application/json"
    assert set(response.json()) == {"detail"}
    assert "database is not answering" in response.json()["detail"]
    assert int(response["Retry-After"]) > 0
    assert "127.0.0.1" not in response.content.decode()


def test_an_api_call_with_a_token_answers_503_json(db):
    api = token_client(make_team("down").member_raw_token)
    api.raise_request_exception = False
    with database_at(free_port()):
        response = api.get("/api/v1/jobs/")
    assert response.status_code == 503 and "detail" in response.json()


def test_what_needs_no_database_keeps_answering(database_refuses):
    # The bundled model list is read from the repository's files.
    response = Client(raise_request_exception=False).get("/api/v1/advice/models")
    assert response.status_code == 200 and response.json()["results"]


@pytest.mark.parametrize("path", PAGES)
def test_pages_answer_a_plain_503_page(database_refuses, path):
    response = Client(raise_request_exception=False).get(path)
    assert response.status_code == 503, response.content[:200]
    assert response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    assert "Temporarily unavailable" in page and "Server Error (500)" not in page
    assert int(response["Retry-After"]) > 0


def test_other_server_errors_under_the_api_are_json_500(monkeypatch):
    from catalog.api import views

    def broken(*args, **kwargs):
        raise RuntimeError("a bug of ours")

    monkeypatch.setattr(views.GpuViewSet, "list", broken)
    response = Client(raise_request_exception=False).get("/api/v1/gpus/")
    assert response.status_code == 500
    assert response.json() == {"detail": "A server error occurred."}


@pytest.fixture
def database_never_answers() -> Iterator[None]:
    """A host that accepts the connection and then says nothing (a hung or half-dead server)."""
    with socket.create_server(("127.0.0.1", 0)) as silent, database_at(silent.getsockname()[1]):
        yield


def test_a_database_that_never_answers_costs_a_request_its_connect_timeout(
    database_never_answers, settings
):
    timeout_s = settings.DATABASES["default"]["OPTIONS"]["connect_timeout"]
    started = time.monotonic()
    response = Client(raise_request_exception=False).get("/api/v1/gpus/")
    elapsed_s = time.monotonic() - started
    assert response.status_code == 503
    assert elapsed_s < timeout_s + 1.5, elapsed_s
