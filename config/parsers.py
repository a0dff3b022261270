"""The API's JSON parser: DRF's, with the one nesting limit every JSON document meets."""

import codecs
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser, get_encoding
from rest_framework.utils import json

from catalog.domain.json_depth import json_loads_limited


class DepthLimitedJSONParser(JSONParser):
    """Refuses a body nested deeper than MAX_JSON_DEPTH with a 400, before the decoder
    recurses (thousands of levels would otherwise be a RecursionError, a 500)."""

    def parse(
        self, stream: Any, media_type: str | None = None, parser_context: dict | None = None
    ) -> Any:
        encoding = get_encoding(parser_context or {})
        parse_constant = json.strict_constant if self.strict else None
        try:
            text = codecs.getreader(encoding)(stream).read()
            return json_loads_limited(text, parse_constant=parse_constant)
        except ValueError as error:
            raise ParseError(f"JSON parse error - {error}") from error
