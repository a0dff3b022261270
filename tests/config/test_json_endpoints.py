"""Every JSON endpoint refuses a body nested 1,000 or 5,000 levels deep with a 400 that says
so, for anonymous and signed-in callers alike; none answers 500.

The endpoints are read from the OpenAPI schema (every operation whose request body may be
application/json), so a new one is covered, or this test says it needs a URL. Before the
fix, DRF's JSONParser met these bodies with a RecursionError: a 500.
"""

import pytest
from rest_framework.test import APIClient

from accounts.models import Membership
from tests.helpers import make_team, token_client

DEPTHS = [1_000, 5_000]
TOO_DEEP = "nested too deeply (more than 64 levels)"


def nested(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


@pytest.fixture
def setup(db):
    return make_team("Alpha")


@pytest.fixture
def json_operations(setup) -> list[tuple[str, str]]:
    """(method, concrete path) for every operation that takes a JSON body."""
    schema = APIClient().get("/api/schema/", {"format": "json"}).json()
    membership = Membership.objects.get(team=setup.team, user=setup.member)
    concrete = {
        "/api/v1/teams/{id}/": f"/api/v1/teams/{setup.team.pk}/",
        "/api/v1/memberships/{id}/": f"/api/v1/memberships/{membership.pk}/",
    }
    operations = []
    for template, methods in schema["paths"].items():
        for method, operation in methods.items():
            content = operation.get("requestBody", {}).get("content", {})
            if "application/json" not in content:
                continue
            assert "{" not in template or template in concrete, f"no test URL for {template}"
            operations.append((method, concrete.get(template, template)))
    return operations


def test_the_schema_lists_the_json_endpoints_we_expect(json_operations):
    paths = {path for _, path in json_operations}
    assert {"/api/v1/advice/sizing", "/api/v1/advice/portability", "/api/v1/tokens/"} <= paths
    assert any(path.startswith("/api/v1/memberships/") for path in paths)


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_deep_body_is_a_400_for_a_signed_in_caller_on_every_json_endpoint(
    setup, json_operations, depth
):
    client = token_client(setup.admin_raw_token)
    for method, path in json_operations:
        response = getattr(client, method)(path, nested(depth), content_type="application/json")
        assert response.status_code == 400, (method, path, response.status_code)
        assert TOO_DEEP in response.json()["detail"], (method, path)


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_deep_body_is_refused_for_an_anonymous_caller_on_every_json_endpoint(
    json_operations, depth
):
    """Open endpoints parse the body and refuse it; the others refuse the caller first."""
    client = APIClient()
    for method, path in json_operations:
        response = getattr(client, method)(path, nested(depth), content_type="application/json")
        assert response.status_code in (400, 401, 403), (method, path, response.status_code)
        if response.status_code == 400:
            assert TOO_DEEP in response.json()["detail"], (method, path)
    for path in ("/api/v1/advice/sizing", "/api/v1/advice/portability"):
        response = client.post(path, nested(depth), content_type="application/json")
        assert response.status_code == 400 and TOO_DEEP in response.json()["detail"]


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_deep_array_body_is_refused_too(depth):
    body = "[" * depth + "]" * depth
    response = APIClient().post("/api/v1/advice/portability", body, content_type="application/json")
    assert response.status_code == 400
    assert TOO_DEEP in response.json()["detail"]


def test_a_body_at_the_limit_is_parsed_and_judged_on_its_fields():
    body = '{"matmuls": ' + "[" * 63 + "]" * 63 + "}"
    response = APIClient().post("/api/v1/advice/portability", body, content_type="application/json")
    assert response.status_code == 400
    assert "matmuls" in response.json()
