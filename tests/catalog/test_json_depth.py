"""catalog/domain/json_depth.py: the one nesting limit, checked before the decoder recurses;
and the price feeds that read JSON through it.

Before the limit, json.loads met 1,000 or 5,000 levels with a RecursionError (a 500 on the API,
a crashed refresh in a feed); see tests/config/test_json_endpoints.py for the endpoints.
"""

import contextlib
import json
import time

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from catalog.domain.json_depth import (
    MAX_JSON_DEPTH,
    JsonTooDeep,
    json_depth_check,
    json_loads_limited,
)
from catalog.feeds.azure import AzureSku, fetch_azure
from catalog.feeds.http import FeedError, new_client
from catalog.feeds.skypilot_rows import gpu_info
from jobs.domain.traces.kineto import parse as trace_parse


def nested(depth: int, kind: str = "array") -> str:
    if kind == "array":
        return "[" * depth + "]" * depth
    return '{"a": ' * depth + "1" + "}" * depth


def depth_of(value) -> int:
    if isinstance(value, dict):
        return 1 + max(map(depth_of, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth_of, value), default=0)
    return 0


@pytest.mark.parametrize("kind", ["array", "object"])
def test_the_limit_itself_parses_and_one_level_more_is_refused(kind):
    assert depth_of(json_loads_limited(nested(MAX_JSON_DEPTH, kind))) == MAX_JSON_DEPTH
    with pytest.raises(JsonTooDeep, match=r"nested too deeply \(more than 64 levels\)"):
        json_loads_limited(nested(MAX_JSON_DEPTH + 1, kind))


@pytest.mark.parametrize("depth", [1_000, 5_000, 100_000])
@pytest.mark.parametrize("kind", ["array", "object"])
def test_hostile_depths_are_a_value_error_not_a_recursion_error(depth, kind):
    """Failed before the fix: json.loads raised RecursionError at these depths."""
    with pytest.raises(ValueError, match="nested too deeply"):
        json_loads_limited(nested(depth, kind))


def test_brackets_inside_strings_do_not_count():
    text = json.dumps({"name": "[" * 500, "escaped": '\\"[[[[' * 100, "list": ["]]]]{{{{"]})
    assert json_loads_limited(text)["name"] == "[" * 500


def test_a_string_cannot_hide_real_nesting_behind_an_escaped_quote():
    text = '["\\"", ' + nested(100) + ', "\\""]'
    with pytest.raises(JsonTooDeep):
        json_loads_limited(text)


def test_bytes_are_decoded_as_json_decodes_them():
    assert json_loads_limited(b'{"a": [1]}') == {"a": [1]}
    assert json_loads_limited('{"a": "é"}'.encode("utf-16")) == {"a": "é"}
    with pytest.raises(JsonTooDeep):
        json_loads_limited(nested(1_000).encode())


def test_malformed_text_is_left_to_the_decoder():
    with pytest.raises(json.JSONDecodeError):
        json_loads_limited("]" * 200)
    with pytest.raises(json.JSONDecodeError):
        json_loads_limited('{"a": [1, 2}')


def test_a_large_flat_document_is_checked_in_one_pass():
    document = json.dumps(
        [{"ts": i, "name": "kernel[0]", "args": {"x": [i]}} for i in range(50_000)]
    )
    json_depth_check(document)  # no error: depth 3, however many brackets


@pytest.mark.parametrize(
    "text",
    [
        '"' + '\\"' * 1_000_000,  # a quote, then escaped quotes to the end
        '"' * 1_000_001,
        '["' + "\\" * 1_000_000,
        "[" * 1_000_000,
    ],
    ids=["escaped-quotes", "quotes", "backslashes", "opening-brackets"],
)
def test_hostile_text_is_checked_in_linear_time(text):
    """Failed before the fix: a string pattern that could fail was retried from every later
    quote, minutes of CPU for a 2 MB body."""
    started = time.perf_counter()
    with contextlib.suppress(JsonTooDeep):
        json_depth_check(text)
    assert time.perf_counter() - started < 1.0


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ab,:'),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.text(alphabet='[]{}"\\ab', max_size=3), children, max_size=3)
    ),
    max_leaves=200,
)


@given(json_values, st.integers(min_value=0, max_value=80))
def test_refused_exactly_when_deeper_than_the_limit(value, wrap):
    for _ in range(wrap):
        value = [value]
    text = json.dumps(value)
    if depth_of(value) > MAX_JSON_DEPTH:
        with pytest.raises(JsonTooDeep):
            json_loads_limited(text)
    else:
        assert json_loads_limited(text) == value


def test_the_trace_parser_uses_the_same_limit():
    assert trace_parse.MAX_JSON_DEPTH is MAX_JSON_DEPTH


def test_an_azure_page_nested_too_deeply_fails_the_feed_with_a_reason():
    """Failed before the fix: RecursionError escaped fetch_azure."""
    transport = httpx.MockTransport(lambda request: httpx.Response(200, content=nested(5_000)))
    with (
        new_client(transport=transport) as client,
        pytest.raises(FeedError, match="nested too deeply"),
    ):
        fetch_azure(
            client, "https://prices.example/api", {"X": AzureSku("h100", 8)}, max_bytes=10**6
        )


def test_a_skypilot_gpu_info_nested_too_deeply_is_unreadable_not_a_crash():
    """Failed before the fix: RecursionError escaped the row parser."""
    assert gpu_info("{" + '"a": ' + nested(5_000) + "}") == {}
    assert gpu_info('{"Gpus": [{"Name": "H100", "Count": 8}]}') == {
        "Gpus": [{"Name": "H100", "Count": 8}]
    }
