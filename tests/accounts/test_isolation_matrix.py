"""Tenant isolation: no caller of one team can see, change or detect another team's objects.

Every private endpoint joins the matrix with one `PrivateEndpoint(...)` line below. For each
endpoint, each kind of credential (API token, signed-in session) and each method, a caller
from team A aims at team B's object: no 2xx may come back, lookups answer 404 exactly as for an
object that does not exist, and nothing of team B changes.
"""

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.db.models import Model, QuerySet

from accounts.models import ApiToken, Membership
from jobs.models import Job
from tests.accounts.conftest import TeamSetup, session_client, token_client


@dataclass(frozen=True)
class PrivateEndpoint:
    name: str
    url: str  # the list URL; detail is f"{url}{lookup}/"
    lookup: Callable[[Model], str]
    victim: Callable[[TeamSetup], Model]  # one of team B's objects
    rows_of: Callable[[TeamSetup], QuerySet]  # everything of team B this endpoint can touch
    change: dict  # a valid body for PUT / PATCH
    create_referencing: Callable[[TeamSetup], dict]  # a POST body naming team B's things


PRIVATE_ENDPOINTS = [
    PrivateEndpoint(
        name="tokens",
        url="/api/v1/tokens/",
        lookup=lambda token: str(token.public_id),
        victim=lambda b: b.member_token,
        rows_of=lambda b: ApiToken.objects.filter(team=b.team),
        change={"name": "renamed"},
        create_referencing=lambda b: {"name": "x", "team": b.team.slug, "user": b.member.pk},
    ),
    PrivateEndpoint(
        name="memberships",
        url="/api/v1/memberships/",
        lookup=lambda membership: str(membership.pk),
        victim=lambda b: Membership.objects.get(team=b.team, user=b.member),
        rows_of=lambda b: Membership.objects.filter(team=b.team),
        change={"role": "admin"},
        create_referencing=lambda b: {
            "username": b.member.username,
            "team": b.team.pk,
            "role": "admin",
        },
    ),
    PrivateEndpoint(
        name="jobs",
        url="/api/v1/jobs/",
        lookup=lambda job: str(job.public_id),
        victim=lambda b: Job.objects.get_or_create(
            team=b.team, kind="trace", inputs_sha256="b" * 64, defaults={"created_by": b.member}
        )[0],
        rows_of=lambda b: Job.objects.filter(team=b.team),
        change={"status": "done"},
        create_referencing=lambda b: {"kind": "trace", "team": b.team.slug},
    ),
    PrivateEndpoint(
        name="teams",
        url="/api/v1/teams/",
        lookup=lambda team: str(team.pk),
        victim=lambda b: b.team,
        rows_of=lambda b: type(b.team).objects.filter(pk=b.team.pk),
        change={"name": "renamed"},
        create_referencing=lambda b: {"name": b.team.name, "slug": b.team.slug},
    ),
]

CREDENTIALS = {
    "admin-token": lambda a: token_client(a.admin_raw_token),
    "member-token": lambda a: token_client(a.member_raw_token),
    "admin-session": lambda a: session_client(a.admin),
    "member-session": lambda a: session_client(a.member),
}


def snapshot(rows: QuerySet) -> list[dict]:
    return sorted((row for row in rows.values()), key=lambda row: str(sorted(row.items())))


@pytest.fixture(params=PRIVATE_ENDPOINTS, ids=lambda endpoint: endpoint.name)
def endpoint(request) -> PrivateEndpoint:
    return request.param


@pytest.fixture(params=CREDENTIALS, ids=str)
def caller(request, team_a):
    return CREDENTIALS[request.param](team_a)


def test_list_shows_nothing_of_the_other_team(endpoint, caller, team_a, team_b):
    endpoint.victim(team_a)  # the caller's own team has one too
    response = caller.get(endpoint.url)
    assert response.status_code == 200
    results = response.json()["results"]
    assert results, "the caller's own team must show up, or this test proves nothing"
    assert endpoint.lookup(endpoint.victim(team_b)) not in {str(row["id"]) for row in results}
    body = response.content.decode()
    assert team_b.team.slug not in body and team_b.member.username not in body


@pytest.mark.parametrize("method", ["get", "put", "patch", "delete"])
def test_the_other_teams_object_answers_404_and_is_untouched(endpoint, caller, team_b, method):
    victim = endpoint.victim(team_b)
    before = snapshot(endpoint.rows_of(team_b))
    url = f"{endpoint.url}{endpoint.lookup(victim)}/"
    response = getattr(caller, method)(url, endpoint.change, format="json")
    missing = getattr(caller, method)(f"{endpoint.url}999999/", endpoint.change, format="json")
    assert response.status_code in {404, 405}
    assert response.status_code == missing.status_code  # indistinguishable from "no such thing"
    assert snapshot(endpoint.rows_of(team_b)) == before


def test_a_post_naming_the_other_teams_objects_changes_nothing_there(endpoint, caller, team_b):
    endpoint.victim(team_b)
    before = snapshot(endpoint.rows_of(team_b))
    response = caller.post(endpoint.url, endpoint.create_referencing(team_b), format="json")
    assert snapshot(endpoint.rows_of(team_b)) == before
    if 200 <= response.status_code < 300:
        assert response.json().get("team") != team_b.team.slug


def test_the_web_token_revoke_of_another_teams_token_is_404(client, team_a, team_b):
    client.force_login(team_a.admin)
    response = client.post(f"/account/tokens/{team_b.member_token.public_id}/revoke/")
    assert response.status_code == 404
    assert ApiToken.objects.filter(pk=team_b.member_token.pk).exists()


def test_anonymous_callers_get_nothing_private(endpoint, team_b):
    from rest_framework.test import APIClient

    response = APIClient().get(endpoint.url)
    assert response.status_code == 401
