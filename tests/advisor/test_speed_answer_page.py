"""The sizing page shows the speed model's separate answers: time to first token and decode
speed per sequence for serving, MFU on 6·N·D for training."""

import re

URL = "/size/"


def _fact(html: str, name: str) -> str:
    match = re.search(rf"<dt>{re.escape(name)}</dt><dd>(.*?)</dd>", html, re.S)
    assert match, f"no {name!r} in the recommendation"
    return match.group(1)


def test_serving_shows_time_to_first_token_and_decode_per_sequence(web):
    response = web.get(URL, {"model": "llama-3.1-8b", "task": "inference"})
    assert response.status_code == 200
    html = response.content.decode()
    assert re.match(
        r"[\d.,]+ ms <span class=\"range\">[\d.,]+–[\d.,]+</span>", _fact(html, "First token")
    )
    assert re.match(r"[\d.,]+ tokens/s", _fact(html, "Per sequence"))


def test_training_shows_mfu_on_6nd(web):
    response = web.get(URL, {"model": "llama-3.1-8b", "task": "full", "context_tokens": 2048})
    assert response.status_code == 200
    assert re.match(
        r"\d+% <span class=\"range\">\d+%–\d+%</span>",
        _fact(response.content.decode(), "MFU (6·N·D)"),
    )
