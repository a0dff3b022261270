"""What the OpenAPI schema promises: every operation's error responses, an upload a client can
send, forms that can say "no value", and JSON (not an HTML page) for unknown API URLs."""

import pytest
from rest_framework.test import APIClient

OPERATIONS = ("get", "post", "put", "patch", "delete")


@pytest.fixture(scope="module")
def schema(django_db_setup, django_db_blocker) -> dict:
    with django_db_blocker.unblock():
        response = APIClient().get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    return response.json()


def operations(schema: dict):
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            if method in OPERATIONS:
                yield method, path, operation


def error_ref(operation: dict, code: str) -> str:
    return operation["responses"][code]["content"]["application/json"]["schema"]["$ref"]


def test_every_operation_documents_401_and_429_with_drfs_error_body(schema):
    """Before: only the success response was documented, so any 401 or 429 was undocumented."""
    for method, path, operation in operations(schema):
        for code in ("401", "429"):
            assert error_ref(operation, code) == "#/components/schemas/Error", (method, path, code)
    assert schema["components"]["schemas"]["Error"]["required"] == ["detail"]


def test_429_documents_retry_after(schema):
    operation = schema["paths"]["/api/v1/gpus/"]["get"]
    assert "Retry-After" in operation["responses"]["429"]["headers"]


def test_400_is_documented_where_there_is_input_with_the_validation_error_body(schema):
    paths = schema["paths"]
    with_input = [
        paths["/api/v1/advice/sizing"]["post"],
        paths["/api/v1/jobs/"]["post"],
        paths["/api/v1/gpus/"]["get"],  # filters and page_size
        paths["/api/v1/memberships/{id}/"]["patch"],
    ]
    for operation in with_input:
        assert error_ref(operation, "400") == "#/components/schemas/ValidationError"
    assert "400" not in paths["/api/v1/gpus/{canonical_key}/"]["get"]["responses"]
    assert "400" not in paths["/api/v1/teams/"]["get"]["responses"]


def test_404_is_documented_for_detail_routes_and_paginated_lists(schema):
    for method, path, operation in operations(schema):
        is_list = method == "get" and path in ("/api/v1/gpus/", "/api/v1/teams/", "/api/v1/jobs/")
        if "{" in path or is_list:
            assert "404" in operation["responses"], (method, path)
    assert "404" not in schema["paths"]["/api/v1/advice/sizing"]["post"]["responses"]


def test_403_is_documented_for_authenticated_operations_and_csrf_checked_writes(schema):
    paths = schema["paths"]
    assert "403" in paths["/api/v1/jobs/"]["get"]["responses"]  # needs a token
    assert "403" in paths["/api/v1/advice/sizing"]["post"]["responses"]  # CSRF for sessions
    assert "403" not in paths["/api/v1/gpus/"]["get"]["responses"]  # public, safe


def test_the_upload_documents_413(schema):
    assert "413" in schema["paths"]["/api/v1/jobs/"]["post"]["responses"]


def test_a_body_of_a_type_the_operation_does_not_read_is_a_documented_415(schema, db):
    """Schemathesis found a 415 on POST /api/v1/jobs/ that the schema did not list."""
    response = APIClient().post(
        "/api/v1/advice/sizing", data=b"<x/>", content_type="application/xml"
    )
    assert response.status_code == 415
    assert set(response.json()) == {"detail"}
    for method, _path, operation in operations(schema):
        if method in ("post", "put", "patch"):
            assert error_ref(operation, "415").endswith("/Error"), (method, _path)


def test_job_files_are_binary_parts_of_a_multipart_body(schema):
    """Before: `files` was a list of URIs, which no generated client can upload."""
    body = schema["paths"]["/api/v1/jobs/"]["post"]["requestBody"]["content"]
    assert list(body) == ["multipart/form-data"]  # a urlencoded form cannot carry files
    files = schema["components"]["schemas"]["JobSubmit"]["properties"]["files"]
    assert files["type"] == "array"
    assert files["items"] == {"type": "string", "format": "binary", "minLength": 1}
    assert files["minItems"] == 1


@pytest.mark.parametrize("name", ["Job", "JobSummary"])
def test_job_fields_that_can_be_null_are_nullable(schema, name):
    """Before: a job that reused no report answered `reused_from: null` against a schema that
    said string (schemathesis found it on POST /api/v1/jobs/)."""
    properties = schema["components"]["schemas"][name]["properties"]
    assert properties["reused_from"]["nullable"] is True
    assert properties["created_by"]["nullable"] is True


@pytest.mark.parametrize("flag", ["supports_tf32", "supports_bf16", "supports_fp8"])
def test_supports_filters_are_plain_booleans(schema, flag):
    """Before: `type: boolean` with the enum ['', 'false', 'true'] (strings), which no value
    satisfies: a client could not send the filter the schema described."""
    parameters = schema["paths"]["/api/v1/gpus/"]["get"]["parameters"]
    (parameter,) = [p for p in parameters if p["name"] == flag]
    assert parameter["schema"] == {"type": "boolean"}
    assert parameter["allowEmptyValue"] is True


def test_filter_bounds_and_page_bounds_are_in_the_schema(schema):
    parameters = {p["name"]: p for p in schema["paths"]["/api/v1/offers/"]["get"]["parameters"]}
    assert parameters["gpu_count"]["schema"]["minimum"] == 1
    assert parameters["gpu_count"]["schema"]["maximum"] == 64
    assert parameters["max_usd_per_hour"]["schema"]["minimum"] == 0
    # django-filter refuses numbers over 1e50 in every NumberFilter; before, undocumented.
    assert parameters["min_gpu_memory_gib"]["schema"]["maximum"] == 1e50
    assert parameters["page"]["schema"]["minimum"] == 1
    assert parameters["page_size"]["schema"]["minimum"] == 1


def test_a_list_that_may_not_be_empty_says_so(schema):
    targets = schema["components"]["schemas"]["PortabilityRequest"]["properties"]["targets"]
    assert targets["minItems"] == 1


def test_form_bodies_use_an_empty_value_for_null(schema):
    """JSON sends null; a multipart or urlencoded form can only leave the field empty."""
    content = schema["paths"]["/api/v1/advice/sizing"]["post"]["requestBody"]["content"]
    assert content["application/json"]["schema"]["$ref"].endswith("/SizingRequest")
    for media_type in ("multipart/form-data", "application/x-www-form-urlencoded"):
        assert content[media_type]["schema"]["$ref"].endswith("/SizingRequestForm")
    form = schema["components"]["schemas"]["SizingRequestForm"]["properties"]
    assert "nullable" not in form["params"]
    assert {"type": "string", "maxLength": 0} in form["params"]["anyOf"]
    zero_stage = form["zero_stage"]["anyOf"]
    assert {"$ref": "#/components/schemas/ZeroStageEnum"} in zero_stage
    assert not any(option.get("$ref", "").endswith("/NullEnum") for option in zero_stage)


@pytest.mark.parametrize("path", ["/api/v1/gpus/a.b/", "/api/v1/offers/1.5/", "/api/v1/nope"])
def test_an_unknown_api_url_is_a_json_404(client, db, path):
    """Before: Django's HTML "Not Found" page, a content type the API never documents."""
    response = client.get(path)
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": "Not found."}


def test_an_unknown_page_url_is_still_an_html_404(client, db):
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_every_operation_documents_503_with_retry_after(schema):
    """The database being down is a JSON 503 (config/errors.py), so every operation says so."""
    for method, path, operation in operations(schema):
        assert error_ref(operation, "503") == "#/components/schemas/Error", (method, path)
        assert "Retry-After" in operation["responses"]["503"]["headers"]


@pytest.mark.parametrize("name", ["gpu", "provider"])
def test_catalogue_key_filters_state_their_pattern_and_the_400(schema, name):
    """Before: any string, while the server accepts only keys the catalogue holds."""
    [parameter] = [
        p for p in schema["paths"]["/api/v1/offers/"]["get"]["parameters"] if p["name"] == name
    ]
    assert parameter["schema"] == {"type": "string", "maxLength": 40, "pattern": "^[-a-zA-Z0-9_]+$"}
    assert "is a 400" in parameter["description"]


def test_an_unknown_catalogue_key_is_the_documented_400(client, db):
    response = client.get("/api/v1/offers/", {"gpu": "no-such-gpu"})
    assert response.status_code == 400 and "gpu" in response.json()


def test_swagger_groups_operations_by_area_and_links_back_to_the_app(schema):
    tags = {path.split("/")[3]: set() for _, path, _ in operations(schema)}
    for _, path, operation in operations(schema):
        tags[path.split("/")[3]].update(operation["tags"])
    assert tags["gpus"] == tags["offers"] == {"catalogue"}
    assert tags["advice"] == {"advice"}
    assert tags["jobs"] == {"jobs"}
    assert tags["tokens"] == tags["memberships"] == {"accounts"}
    assert {tag["name"] for tag in schema["tags"]} == {"catalogue", "advice", "jobs", "accounts"}
    assert "[Back to GPU Advisor](/)" in schema["info"]["description"]


def test_the_padlock_is_only_where_a_token_is_needed(schema):
    public = {
        ("get", "/api/v1/gpus/"),
        ("get", "/api/v1/offers/"),
        ("post", "/api/v1/advice/sizing"),
    }
    for method, path, operation in operations(schema):
        if (method, path) in public:
            assert "security" not in operation, (method, path)
        if path.startswith(("/api/v1/jobs/", "/api/v1/tokens/")):
            assert {"apiToken": []} in operation["security"], (method, path)
            assert {} not in operation["security"], (method, path)
