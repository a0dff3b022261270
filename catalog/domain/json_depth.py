"""One nesting limit for every JSON document the app parses, checked before decoding.

The standard decoder recurses once per level: thousands of levels exhaust the interpreter's
stack (RecursionError), and depths just under that limit still parse into values that later
code walks recursively. No document we accept (a config.json, an API body, a price feed, a
profiler trace) comes near 64 levels, so deeper ones are refused up front, at regex speed,
without building anything.
"""

import json
import re
from itertools import accumulate
from typing import Any

MAX_JSON_DEPTH = 64

# A JSON string, escapes included, written so that it never fails once it has begun: an
# unterminated string runs to the end of the text. A pattern that could fail would be tried
# again from every later quote: quadratic time on '"' followed by many '\"'.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.S)
_NOT_A_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class JsonTooDeep(ValueError):
    """The document nests arrays and objects deeper than MAX_JSON_DEPTH."""

    def __init__(self) -> None:
        super().__init__(f"JSON nested too deeply (more than {MAX_JSON_DEPTH} levels)")


def json_depth_check(text: str) -> None:
    """Raise JsonTooDeep when `text` opens more than MAX_JSON_DEPTH arrays and objects at once.

    Brackets inside strings do not count. Malformed text is left for the decoder to refuse.
    """
    brackets = _NOT_A_BRACKET.sub("", _STRING.sub("", text))
    if len(brackets) <= MAX_JSON_DEPTH:
        return
    if max(accumulate(map(_STEP.__getitem__, brackets))) > MAX_JSON_DEPTH:
        raise JsonTooDeep()


def json_loads_limited(data: str | bytes | bytearray, **options: Any) -> Any:
    """json.loads with the depth limit; `options` go to json.loads. Every refusal is a
    ValueError: JsonTooDeep, json.JSONDecodeError, UnicodeDecodeError, or the interpreter's
    limit on the digits of an integer."""
    if isinstance(data, bytes | bytearray):
        data = bytes(data).decode(json.detect_encoding(data), "surrogatepass")
    json_depth_check(data)
    return json.loads(data, **options)
