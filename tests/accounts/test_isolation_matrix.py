"""Tenant isolation: no caller of one team can see, change or detect another team's objects.

Every private endpoint joins the matrix with one `PrivateEndpoint(...)` line below. For each
endpoint, each kind of credential (API token, signed-in session) and each method, a caller
from team A aims at team B's object: no 2xx may come back, lookups answer 404 exactly as for an
object that does not exist, and nothing of team B changes.
"""

import uuid
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.db import connection
from django.db.models import Model, QuerySet

from accounts.models import ApiToken, Membership
from accounts.services import api_token_create
from jobs.models import Job
from tests.helpers import TeamSetup, session_client, token_client


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


# Losing access. A member of team A who is removed (by an admin, through the API), removed by a
# write that bypasses signals (so the authentication check alone must hold), deactivated, or
# whose team is deleted: their token answers 401 everywhere (lists, reports, job submission,
# minting tokens) and their session sees nothing of team A.


def _remove_through_the_api(a: TeamSetup) -> None:
    membership = Membership.objects.get(team=a.team, user=a.member)
    response = token_client(a.admin_raw_token).delete(f"/api/v1/memberships/{membership.pk}/")
    assert response.status_code == 204


def _remove_bypassing_signals(a: TeamSetup) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {Membership._meta.db_table} WHERE team_id = %s AND user_id = %s",
            [a.team.pk, a.member.pk],
        )


def _deactivate(a: TeamSetup) -> None:
    a.member.is_active = False
    a.member.save(update_fields=["is_active"])


def _delete_team(a: TeamSetup) -> None:
    # Through the queryset, so `a.team` keeps its pk and the checks can name what was there.
    type(a.team).objects.filter(pk=a.team.pk).delete()


LOSSES = {
    "removed": _remove_through_the_api,
    "removed-bypassing-signals": _remove_bypassing_signals,
    "deactivated": _deactivate,
    "team-deleted": _delete_team,
}


@pytest.fixture(params=LOSSES, ids=str)
def loss(request) -> Callable[[TeamSetup], None]:
    return LOSSES[request.param]


def test_a_token_stops_working_the_moment_its_user_loses_the_team(endpoint, loss, team_a):
    """Before the fix a removed member's token kept full team access (scoping trusted
    token.team_id); the bypassing-signals case fails without the check on authentication."""
    client = token_client(team_a.member_raw_token)
    detail = f"{endpoint.url}{endpoint.lookup(endpoint.victim(team_a))}/"
    assert client.get(endpoint.url).status_code == 200  # it worked a moment ago
    loss(team_a)
    assert client.get(endpoint.url).status_code == 401
    assert client.get(detail).status_code == 401
    assert client.post(endpoint.url, {"name": "after", "kind": "trace"}).status_code == 401


def test_minting_a_token_after_losing_the_team_is_refused(loss, team_a):
    client = token_client(team_a.member_raw_token)
    loss(team_a)
    response = client.post("/api/v1/tokens/", {"name": "spare", "expires_in_days": 1})
    assert response.status_code == 401
    assert not ApiToken.objects.filter(name="spare").exists()


def test_a_removed_member_keeps_none_of_their_tokens_of_the_team(team_a, team_b):
    Membership.objects.create(team=team_b.team, user=team_a.member)
    api_token_create(user=team_a.member, team=team_b.team, name="bravo", expires_in=None)
    _remove_through_the_api(team_a)
    assert not ApiToken.objects.filter(user=team_a.member, team=team_a.team).exists()
    # Their other team's tokens are not touched.
    assert ApiToken.objects.filter(user=team_a.member, team=team_b.team).count() == 1


def test_a_removed_or_deactivated_members_session_sees_nothing_of_the_team(endpoint, loss, team_a):
    victim = endpoint.victim(team_a)
    detail = f"{endpoint.url}{endpoint.lookup(victim)}/"
    client = session_client(team_a.member)
    loss(team_a)
    after_loss = snapshot(endpoint.rows_of(team_a))
    listed = client.get(endpoint.url)
    if listed.status_code == 200:
        assert listed.json()["results"] == []
    else:
        assert listed.status_code in {401, 403}
    assert client.get(detail).status_code in {401, 403, 404}
    client.post(endpoint.url, endpoint.create_referencing(team_a), format="json")
    assert snapshot(endpoint.rows_of(team_a)) == after_loss


# Minting: a token may only create tokens that expire, and no later than itself.


def test_a_token_cannot_mint_a_token_that_never_expires(team_a):
    """Before the fix a 1-day token could create one with no expiry."""
    response = token_client(team_a.member_raw_token).post(
        "/api/v1/tokens/", {"name": "forever", "expires_in_days": None}, format="json"
    )
    assert response.status_code == 400
    assert "never expires" in response.json()["expires_in_days"][0]
    assert not ApiToken.objects.filter(name="forever").exists()


def test_a_token_cannot_mint_a_token_that_outlives_it(team_a):
    parent = team_a.member_raw_token  # 30 days
    response = token_client(parent).post(
        "/api/v1/tokens/", {"name": "longer", "expires_in_days": 31}, format="json"
    )
    assert response.status_code == 400
    assert "outlives" in response.json()["expires_in_days"][0]
    shorter = token_client(parent).post(
        "/api/v1/tokens/", {"name": "shorter", "expires_in_days": 29}, format="json"
    )
    assert shorter.status_code == 201
    child = ApiToken.objects.get(name="shorter")
    assert child.expiry <= team_a.member_token.expiry
    assert child.team == team_a.team and child.user == team_a.member


# The HTML job pages and the SARIF download: another team's job, and the job of a team one was
# removed from, answer 404 exactly like a job that does not exist; anonymous callers are sent
# to the login page.


def _scan_job(team_setup: TeamSetup) -> Job:
    return Job.objects.create(
        team=team_setup.team,
        created_by=team_setup.member,
        kind="codescan",
        status="done",
        inputs_sha256="c" * 64,
        report={"findings": [], "sarif": {"version": "2.1.0", "runs": []}},
    )


JOB_PAGES = {
    "detail": lambda job: f"/jobs/{job.public_id}/",
    "sarif": lambda job: f"/jobs/{job.public_id}/sarif/",
}


@pytest.mark.parametrize("page", JOB_PAGES)
def test_the_job_pages_answer_only_the_jobs_team(client, team_a, team_b, page):
    job = _scan_job(team_b)
    url = JOB_PAGES[page](job)
    missing = f"/jobs/{uuid.uuid4()}/" + ("sarif/" if page == "sarif" else "")
    client.force_login(team_b.member)
    assert client.get(url).status_code == 200  # so the 404s below are the boundary's
    for outsider in (team_a.admin, team_a.member):
        client.force_login(outsider)
        assert client.get(url).status_code == 404
        assert client.get(missing).status_code == 404
    _remove_through_the_api(team_b)
    client.force_login(team_b.member)
    assert client.get(url).status_code == 404
    client.logout()
    anonymous = client.get(url)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/account/login/")


def test_the_job_list_page_shows_only_the_callers_teams(client, team_a, team_b):
    job = _scan_job(team_b)
    client.force_login(team_b.member)
    assert str(job.public_id) in client.get("/jobs/").content.decode()
    for outsider in (team_a.admin, team_a.member):
        client.force_login(outsider)
        assert str(job.public_id) not in client.get("/jobs/").content.decode()
    _remove_through_the_api(team_b)
    client.force_login(team_b.member)
    assert str(job.public_id) not in client.get("/jobs/").content.decode()
    client.logout()
    anonymous = client.get("/jobs/")
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/account/login/")
