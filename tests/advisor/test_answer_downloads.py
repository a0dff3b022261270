"""The sizing answer downloads from its page (issue 24): the whole report as JSON, the
candidates as CSV, each named for the model."""

import csv
import io

ANSWER = "/size/?model=llama-3.1-8b&task=inference"


def test_the_answer_downloads_as_the_apis_json(client, catalog):
    response = client.get(f"{ANSWER}&download=json")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert 'filename="sizing-llama-31-8b.json"' in response["Content-Disposition"]
    body = response.json()
    assert body["recommendation"]["gpu_count"] >= 1
    assert body["candidates"]


def test_the_candidates_download_as_csv_one_row_each(client, catalog):
    response = client.get(f"{ANSWER}&download=csv")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    json_rows = client.get(f"{ANSWER}&download=json").json()["candidates"]
    assert len(rows) == len(json_rows)
    first = rows[0]
    assert first["gpu"] == json_rows[0]["gpu"]
    assert float(first["output_tokens_per_s_total"]) > 0
    assert first["fits"] == "True"


def test_the_answer_page_links_both_downloads(client, catalog):
    page = client.get(ANSWER).content.decode()
    assert "download=json" in page and "download=csv" in page
