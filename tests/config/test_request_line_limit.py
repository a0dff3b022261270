"""The request-line limit is set deliberately (gunicorn.conf.py) and the schema documents what
gunicorn answers past it. Before: gunicorn's default of 4,094 bytes, an undocumented HTML 414."""

import runpy

import httpx

from config.schema import REQUEST_LINE_LIMIT_BYTES
from tests.helpers import ROOT, running_gunicorn


def test_the_schema_states_the_limit_gunicorn_is_given():
    served = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
    assert served["limit_request_line"] == REQUEST_LINE_LIMIT_BYTES


def test_a_request_line_up_to_the_limit_is_served_and_one_over_it_gets_414(tmp_path):
    # The bundled model list needs no database: nothing else decides the answer.
    path = "/api/v1/advice/models?q="
    database = f"sqlite:///{tmp_path / 'unused.sqlite3'}"
    with (
        running_gunicorn(tmp_path, workers=1, DATABASE_URL=database) as server,
        httpx.Client(base_url=server.url, timeout=30) as client,
    ):
        # "GET " + path + " HTTP/1.1" is the request line.
        overhead = len(f"GET {path} HTTP/1.1")
        fits = client.get(path + "x" * (REQUEST_LINE_LIMIT_BYTES - overhead))
        over = client.get(path + "x" * (REQUEST_LINE_LIMIT_BYTES - overhead + 1))
    assert fits.status_code == 200, fits.text[:200]
    assert over.status_code == 414


def test_the_schema_documents_414_for_operations_with_query_parameters(client):
    schema = client.get("/api/schema/?format=json").json()
    offers = schema["paths"]["/api/v1/offers/"]["get"]["responses"]
    assert "414" in offers and "gunicorn" in offers["414"]["description"]
    assert "503" in offers and "Retry-After" in offers["503"]["headers"]
