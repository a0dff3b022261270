"""What the OpenAPI schema says beyond drf-spectacular's defaults, for every operation at once.

Views stay free of schema decorations for the answers they share: each operation documents
the error responses that apply to it (with DRF's error bodies), and form-encoded request bodies
say how a form sends "no value".
"""

import copy

import django_filters
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db.models import SlugField
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.plumbing import ResolvedComponent
from rest_framework import serializers

ERROR_COMPONENT = "Error"
VALIDATION_ERROR_COMPONENT = "ValidationError"
FORM_MEDIA_TYPES = ("multipart/form-data", "application/x-www-form-urlencoded")
# A form has no null: an empty value stands for it (DRF reads "" as None for nullable fields).
FORM_EMPTY_VALUE = {"type": "string", "maxLength": 0}

ERROR_SCHEMA = {
    "type": "object",
    "description": "DRF's error body: what went wrong, for a person to read.",
    "properties": {"detail": {"type": "string"}},
    "required": ["detail"],
}
VALIDATION_ERROR_SCHEMA = {
    "type": "object",
    "description": (
        "DRF's validation error body: each rejected field (or query parameter) maps to its "
        "messages, `non_field_errors` to messages about the request as a whole; items of a list "
        "field map by index. A body that could not be parsed at all gets `detail`."
    ),
    "additionalProperties": {
        "anyOf": [
            {"type": "array", "items": {}},
            {"type": "object", "additionalProperties": {}},
            {"type": "string"},
        ]
    },
}
RETRY_AFTER_HEADER = {
    "Retry-After": {
        "schema": {"type": "integer", "minimum": 0},
        "description": "Seconds until the throttle lets this caller through again.",
    }
}
DATABASE_RETRY_AFTER_HEADER = {
    "Retry-After": {
        "schema": {"type": "integer", "minimum": 0},
        "description": "Seconds after which trying again may succeed.",
    }
}
# gunicorn.conf.py's limit_request_line: gunicorn answers a longer request line itself, in HTML.
REQUEST_LINE_LIMIT_BYTES = 8190


# Swagger UI groups operations by tag: by area of the API, not one "v1" group.
API_AREAS = {
    "gpus": "catalogue",
    "offers": "catalogue",
    "providers": "catalogue",
    "advice": "advice",
    "jobs": "jobs",
    "tokens": "accounts",
    "memberships": "accounts",
    "teams": "accounts",
}


class AutoSchema(SpectacularAutoSchema):
    """drf-spectacular's AutoSchema, plus the error responses each operation can give, tagged
    by the area of the API it belongs to."""

    def get_auth(self) -> list[dict]:
        """No padlock where no token is needed: an operation anyone may call lists none (a
        token is still accepted there, and counts for the caller's throttle)."""
        auths = super().get_auth()
        return [] if {} in auths else auths

    def get_tags(self) -> list[str]:
        segments = [segment for segment in self.path.split("/") if segment]
        after_version = segments[2] if len(segments) > 2 and segments[:2] == ["api", "v1"] else ""
        return [API_AREAS.get(after_version, after_version or "other")]

    def _get_response_bodies(self, direction="response") -> dict:
        responses = super()._get_response_bodies(direction)
        if direction != "response":
            return responses
        for code, description in self._error_responses().items():
            responses.setdefault(code, self._error_response(code, description))
        return responses

    def _get_pagination_parameters(self) -> list[dict]:
        parameters = super()._get_pagination_parameters()
        for parameter in parameters:
            if parameter["name"] in ("page", "page_size"):
                parameter["schema"]["minimum"] = 1
                parameter["allowEmptyValue"] = True  # empty: the first page, the default size
        return parameters

    def _map_serializer_field(self, field, direction, bypass_extensions=False) -> dict:
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        if (
            isinstance(field, serializers.ListField)
            and not field.allow_empty
            and schema.get("type") == "array"
        ):
            schema.setdefault("minItems", 1)
        return schema

    def _get_filter_parameters(self) -> list[dict]:
        parameters = super()._get_filter_parameters()
        filterset_class = getattr(self.view, "filterset_class", None)
        declared = filterset_class.base_filters if filterset_class else {}
        for parameter in parameters:
            # django-filter reads an empty value as "no filter", which the HTML forms rely on.
            parameter["allowEmptyValue"] = True
            declared_filter = declared.get(parameter["name"])
            if isinstance(declared_filter, django_filters.NumberFilter):
                parameter["schema"].update(_number_bounds(declared_filter.field))
            if isinstance(declared_filter, django_filters.ModelChoiceFilter):
                _catalogue_key(parameter, declared_filter)
        return parameters

    def _error_responses(self) -> dict[str, str]:
        public = {} in super().get_auth()
        unsafe = self.method in ("POST", "PUT", "PATCH", "DELETE")
        errors = {}
        if self._takes_input():
            errors["400"] = "The request is invalid: each rejected field says why."
        errors["401"] = (
            "A token was sent but is invalid, expired or revoked (send none to use this "
            "operation anonymously)."
            if public
            else "No credentials, or a token that is invalid, expired or revoked."
        )
        if not public:
            errors["403"] = "The credentials are valid but may not do this."
        elif unsafe:
            errors["403"] = "A browser session sent no valid CSRF token."
        if self._get_paginator() and self._is_list_view():
            errors["404"] = "No such page of results."
        if "{" in self.path:
            errors["404"] = "Not found, or not visible to the caller's team."
        if self.method in ("POST", "PUT", "PATCH"):
            errors["413"] = (
                "The request body (or the upload) is over its size limit: the message says which."
            )
            errors["415"] = (
                "The body's Content-Type is not one this operation reads (see requestBody), or "
                "a multipart body came without its type."
            )
        if self.view.get_throttles():
            errors["429"] = "Too many requests: wait for the time Retry-After gives."
        if self.method == "GET" and self._takes_input():
            errors["414"] = (
                f"The request line (path and query string) is over {REQUEST_LINE_LIMIT_BYTES:,} "
                "bytes. The server (gunicorn) answers this before the app, with an HTML page, "
                "not JSON: send fewer or shorter filter values."
            )
        errors["503"] = (
            "The database is not answering: nothing was changed; try again after Retry-After."
        )
        return errors

    def _takes_input(self) -> bool:
        """A request body, filters or a page size: things a caller can get wrong."""
        if self.method in ("POST", "PUT", "PATCH"):
            return True
        if not self._is_list_view():
            return False
        paginator = self._get_paginator()
        return bool(getattr(self.view, "filterset_class", None)) or bool(
            paginator and getattr(paginator, "page_size_query_param", None)
        )

    def _error_response(self, code: str, description: str) -> dict:
        name, schema = (
            (VALIDATION_ERROR_COMPONENT, VALIDATION_ERROR_SCHEMA)
            if code == "400"
            else (ERROR_COMPONENT, ERROR_SCHEMA)
        )
        component = ResolvedComponent(
            name=name, type=ResolvedComponent.SCHEMA, object=name, schema=schema
        )
        self.registry.register_on_missing(component)
        if code == "414":
            return {"description": description, "content": {"text/html": {"schema": {}}}}
        response = {
            "description": description,
            "content": {"application/json": {"schema": component.ref}},
        }
        if code == "401":
            response["headers"] = {
                "WWW-Authenticate": {
                    "schema": {"type": "string"},
                    "description": "How to authenticate: `Token`.",
                }
            }
        if code == "429":
            response["headers"] = RETRY_AFTER_HEADER
        if code == "503":
            response["headers"] = DATABASE_RETRY_AFTER_HEADER
        return response


def _catalogue_key(parameter: dict, declared_filter) -> None:
    """A filter by a catalogue row's key: the key's own pattern and length, and the 400 for a
    key the catalogue does not hold (its values live in the database, not in the schema)."""
    model = declared_filter.queryset.model
    key_field = model._meta.get_field(declared_filter.field.to_field_name)
    schema = {"type": "string", "maxLength": key_field.max_length}
    if isinstance(key_field, SlugField):
        schema["pattern"] = "^[-a-zA-Z0-9_]+$"
    parameter["schema"] = schema
    what = declared_filter.label or parameter["name"].capitalize()
    parameter["description"] = (
        f"{what}: its `{key_field.name}` in the catalogue; a key the catalogue does not hold "
        "is a 400 naming this parameter."
    )


def _number_bounds(field) -> dict:
    """minimum / maximum from a form field's validators: its min_value and max_value, and the
    1e50 ceiling django-filter puts on every NumberFilter."""
    bounds = {}
    for validator in field.validators:
        if isinstance(validator, MinValueValidator):
            bounds["minimum"] = max(
                bounds.get("minimum", validator.limit_value), validator.limit_value
            )
        elif isinstance(validator, MaxValueValidator):
            bounds["maximum"] = min(
                bounds.get("maximum", validator.limit_value), validator.limit_value
            )
    return bounds


def postprocess_form_bodies(result: dict, generator, request, public) -> dict:
    """Form-encoded request bodies get their own components, where null is an empty value.

    JSON sends null; a multipart or urlencoded form can only leave a field empty, so a client
    generated from the schema must send "" for a nullable field. A body that uploads files is
    multipart only: a urlencoded form cannot carry a file.
    """
    schemas = result.get("components", {}).get("schemas", {})
    for path_item in result.get("paths", {}).values():
        for operation in path_item.values():
            content = operation.get("requestBody", {}).get("content", {})
            if _uploads_files(content, schemas):
                content.pop("application/x-www-form-urlencoded", None)
            for media_type in FORM_MEDIA_TYPES:
                if media_type in content:
                    content[media_type]["schema"] = _form_variant(
                        content[media_type]["schema"], schemas
                    )
    return result


def _uploads_files(content: dict, schemas: dict) -> bool:
    schema = content.get("multipart/form-data", {}).get("schema", {})
    schema = _resolve(schema, schemas)
    return any(
        prop.get("format") == "binary" or prop.get("items", {}).get("format") == "binary"
        for prop in schema.get("properties", {}).values()
    )


def _form_variant(schema: dict, schemas: dict) -> dict:
    """The `<Name>Form` component for a form body whose fields include nullable ones."""
    if "$ref" not in schema:
        return schema
    name = schema["$ref"].rsplit("/", 1)[-1]
    source = schemas[name]
    nullable = {
        field: prop for field, prop in source.get("properties", {}).items() if prop.get("nullable")
    }
    if not nullable:
        return schema
    form_name = f"{name}Form"
    if form_name not in schemas:
        variant = copy.deepcopy(source)
        for field, prop in nullable.items():
            variant["properties"][field] = _empty_for_null(prop)
        variant["description"] = (
            f"{source.get('description', '')}\n\nAs a form: leave a field empty for null."
        ).strip()
        schemas[form_name] = variant
    return {"$ref": f"#/components/schemas/{form_name}"}


def _empty_for_null(prop: dict) -> dict:
    """The same field, with an empty value in place of null."""
    prop = {key: value for key, value in copy.deepcopy(prop).items() if key != "nullable"}
    combined = prop.get("oneOf") or prop.get("anyOf") or prop.get("allOf")
    if combined:
        alternatives = [
            option for option in combined if not option.get("$ref", "").endswith("/NullEnum")
        ]
    else:
        value = {key: val for key, val in prop.items() if key in TYPE_KEYWORDS}
        alternatives = [value] if value else []
    annotations = {
        key: val
        for key, val in prop.items()
        if key not in TYPE_KEYWORDS and key not in ("oneOf", "anyOf", "allOf")
    }
    if not alternatives:  # any value at all (a JSON document as text): empty is one of them
        return annotations
    return {**annotations, "anyOf": [*alternatives, FORM_EMPTY_VALUE]}


TYPE_KEYWORDS = frozenset(
    {
        "type",
        "format",
        "enum",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "pattern",
        "items",
        "minItems",
        "maxItems",
        "properties",
        "additionalProperties",
        "required",
    }
)


def _resolve(schema: dict, schemas: dict) -> dict:
    if "$ref" in schema:
        return schemas.get(schema["$ref"].rsplit("/", 1)[-1], {})
    return schema
