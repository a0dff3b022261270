"""Two or three configurations of one sizing answer side by side: picked by a key that names
GPU, count, layout and offer, shown as a table at a URL that can be shared, and what cannot be
compared said on the page."""

import re
from urllib.parse import urlencode

import pytest
from django.test import Client

from advisor.comparison import comparison_key

ANSWER = {"model": "llama-3.1-8b", "task": "inference", "context_tokens": 4096}


@pytest.fixture
def client(catalog) -> Client:
    return Client()


def page(client: Client, **extra) -> str:
    query = urlencode([*ANSWER.items(), *extra.get("pairs", [])])
    response = client.get(f"/size/?{query}")
    assert response.status_code == 200
    return response.content.decode()


def compared_table(html: str) -> str:
    start = html.index('<table class="data compared">')
    return html[start : html.index("</table>", start)]


def test_each_fitting_row_can_be_ticked_by_its_comparison_key(client):
    html = page(client)
    keys = re.findall(r'name="compare" value="([^"]+)" form="compare-configurations"', html)
    assert len(keys) == len(set(keys)) > 3
    assert '<form id="compare-configurations"' in html
    assert '<input type="hidden" name="model" value="llama-3.1-8b">' in html


def test_two_picked_configurations_are_shown_with_their_own_figures(client, api):
    candidates = api.post("/api/v1/advice/sizing", ANSWER, format="json").json()["candidates"]
    first, third = candidates[0], candidates[2]
    html = page(
        client, pairs=[("compare", comparison_key(first)), ("compare", comparison_key(third))]
    )
    table = compared_table(html)
    headings = re.findall(r'<th scope="col">([^<]+)</th>', table)
    assert headings[1:] == [
        f"{first['gpu_count']}× {first['gpu_name']}",
        f"{third['gpu_count']}× {third['gpu_name']}",
    ]
    providers = re.search(r"Provider · instance</th>(.*?)</tr>", table, re.S).group(1)
    assert first["offer"]["instance_type"] in providers
    assert third["offer"]["instance_type"] in providers
    memory = re.search(r"Memory / usable GiB per GPU</th>(.*?)</tr>", table, re.S).group(1)
    assert f"{first['memory_per_gpu_gib']:.1f} / {first['usable_per_gpu_gib']:.1f}" in memory
    # The rows picked stay ticked, so the comparison can be changed from the table.
    ticked = re.findall(r'name="compare" value="([^"]+)"[^>]* checked>', html)
    assert ticked == [comparison_key(first), comparison_key(third)]


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        (1, "Pick 2 or 3 to compare."),
        (4, "At most 3 configurations side by side: the first shown."),
    ],
)
def test_too_few_or_too_many_are_said(client, api, keys, message):
    candidates = api.post("/api/v1/advice/sizing", ANSWER, format="json").json()["candidates"]
    pairs = [("compare", comparison_key(c)) for c in candidates[:keys]]
    html = page(client, pairs=pairs)
    assert message in html


def test_a_configuration_no_longer_in_the_answer_is_said_not_guessed(client, api):
    candidates = api.post("/api/v1/advice/sizing", ANSWER, format="json").json()["candidates"]
    pairs = [("compare", comparison_key(c)) for c in candidates[:2]]
    pairs.append(("compare", "H100-SXM~8~tp8~z0~nowhere~gone~mars~on_demand"))
    html = page(client, pairs=pairs)
    assert "1 of the configurations to compare is not in this answer any more" in html
    assert len(re.findall(r'<th scope="col">', compared_table(html))) == 3
