"""DRF fields and serializer behaviour the whole API shares."""

import difflib
from collections.abc import Mapping
from typing import Any

from django.http import QueryDict
from rest_framework import serializers


class StringField(serializers.CharField):
    """A string, as the schema says: DRF's CharField would quietly turn the number 0 into "0"."""

    def to_internal_value(self, data) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _json_type_error(field: serializers.Field, value: Any) -> str | None:
    """Why `value` is not of the JSON type `field` documents, or None."""
    if value is None:
        return None  # allow_null is the field's own check
    if isinstance(field, serializers.BooleanField) and not isinstance(value, bool):
        return "Must be true or false."
    if isinstance(field, serializers.IntegerField) and not _is_int(value):
        return "Must be a JSON integer."
    if isinstance(field, serializers.FloatField) and not (
        _is_int(value) or isinstance(value, float)
    ):
        return "Must be a JSON number."
    if isinstance(field, serializers.ChoiceField):
        wants_int = all(_is_int(choice) for choice in field.choices)
        if wants_int != _is_int(value) or not (wants_int or isinstance(value, str)):
            return f"Must be a JSON {'integer' if wants_int else 'string'}."
    if isinstance(field, serializers.CharField) and not isinstance(value, str):
        return "Must be a string."
    if isinstance(field, serializers.ListField) and isinstance(value, list):
        for index, item in enumerate(value):
            if message := _json_type_error(field.child, item):
                return f"Item {index}: {message}"
    return None


class JsonTypesMixin:
    """A JSON body's values must have the types the schema states. DRF's fields read 0 as false
    and "16" as 16, which a form post needs (all its values are text) but which from a JSON
    client is a mistake. Applies to JSON bodies of API requests (the serializer has the request
    in its context); the page and the commands keep DRF's conversions."""

    def to_internal_value(self, data: Any) -> Any:
        if self.context.get("request") is not None and (
            isinstance(data, Mapping) and not isinstance(data, QueryDict)
        ):
            errors = {
                name: [message]
                for name, field in self.fields.items()
                if name in data
                and not field.read_only
                and (message := _json_type_error(field, data[name]))
            }
            if errors:
                raise serializers.ValidationError(errors)
        return super().to_internal_value(data)


class KnownFieldsMixin:
    """A body's keys must be the serializer's own: a misspelt field ("ttft_p95" for
    "ttft_p95_ms") would otherwise be dropped without a word and the answer made without it.
    `unknown_field_hints` gives the message for names a caller may reasonably send (a field of
    another endpoint); others get the nearest field's name. Form posts (a QueryDict, with its
    CSRF token) are left to their form."""

    unknown_field_hints: Mapping[str, str] = {}

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping) and not isinstance(data, QueryDict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(
                    {name: [self._unknown_message(name)] for name in unknown}
                )
        return super().to_internal_value(data)

    def _unknown_message(self, name: str) -> str:
        if name in self.unknown_field_hints:
            return self.unknown_field_hints[name]
        near = difflib.get_close_matches(name, list(self.fields), n=1)
        return "Unknown field." + (f" Did you mean {near[0]}?" if near else "")
