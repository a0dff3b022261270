"""The API's JSON renderer: DRF's output, written by msgspec's encoder.

A sizing answer is ~285 KB of numbers and strings (every catalogue GPU at 1, 2, 4 and 8 GPUs);
DRF's json.dumps took 4.7 ms of a 15 ms request to write it (bench/results/sizing_api.md).
msgspec (already pinned, for the trace parsers) writes the same compact UTF-8 JSON, using DRF's
encoder for the types it does not know (lazy strings, querysets). An indented response, which a
client asks for with `; indent=N`, and anything msgspec cannot write go through DRF's renderer;
a NaN, which DRF's strict renderer would turn into a 500, is written as null (the API property
tests render every answer with DRF's strict renderer too, so a NaN the engine makes still
fails a test). msgspec writes bytes as base64 and timedeltas as ISO durations where DRF would
not; the API's serializers hand it neither (their fields turn both into text first).
"""

from typing import Any

import msgspec
from rest_framework.renderers import JSONRenderer
from rest_framework.utils.encoders import JSONEncoder

_DRF_DEFAULT = JSONEncoder().default


def _encode_other(value: Any) -> Any:
    """What msgspec does not write itself: str subclasses (DRF's Hyperlink), then whatever DRF's
    encoder turns into JSON (lazy strings, querysets, ...)."""
    if isinstance(value, str):
        return str(value)
    return _DRF_DEFAULT(value)


# COERCE_DECIMAL_TO_STRING is off: decimals are JSON numbers, as DRF writes them.
_ENCODER = msgspec.json.Encoder(enc_hook=_encode_other, decimal_format="number")


class FastJSONRenderer(JSONRenderer):
    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: dict | None = None,
    ) -> bytes:
        if data is None:
            return b""
        if self.get_indent(accepted_media_type or "", renderer_context or {}) is not None:
            return super().render(data, accepted_media_type, renderer_context)
        try:
            rendered = _ENCODER.encode(data)
        except (TypeError, OverflowError, msgspec.EncodeError):
            return super().render(data, accepted_media_type, renderer_context)
        if b"\xe2\x80" in rendered:
            # As DRF does: U+2028 and U+2029 are valid JSON but end a line in JavaScript.
            rendered = rendered.replace(b"\xe2\x80\xa8", b"\\u2028").replace(
                b"\xe2\x80\xa9", b"\\u2029"
            )
        return rendered
