"""API tokens: shown once, stored hashed, revocable, expiring, with their last use recorded."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from accounts.models import ApiToken
from tests.helpers import session_client, token_client

TEAMS_URL = "/api/v1/teams/"
TOKENS_URL = "/api/v1/tokens/"


def test_a_created_token_is_returned_once_and_authenticates(team_a):
    response = session_client(team_a.member).post(
        TOKENS_URL, {"name": "nightly sizing", "expires_in_days": 7}, format="json"
    )
    assert response.status_code == 201
    raw = response.json()["token"]
    assert raw.startswith("gpua_")
    listed = session_client(team_a.member).get(TOKENS_URL).json()["results"]
    assert all("token" not in row for row in listed)
    assert {row["name"] for row in listed} == {"member tool", "nightly sizing"}
    teams = token_client(raw).get(TEAMS_URL)
    assert teams.status_code == 200
    assert [t["slug"] for t in teams.json()["results"]] == ["alpha"]


def test_the_database_never_holds_the_raw_token(team_a):
    raw = team_a.member_raw_token
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {ApiToken._meta.db_table}")
        stored = [str(value) for row in cursor.fetchall() for value in row]
    assert not any(raw in value for value in stored)
    # What is stored is the token's first characters (to find it) and a SHA-512 digest.
    token = ApiToken.objects.get(pk=team_a.member_token.pk)
    assert len(token.digest) == 128 and raw.startswith(token.token_key)


def test_a_revoked_token_is_refused(team_a):
    client = token_client(team_a.member_raw_token)
    assert client.get(TEAMS_URL).status_code == 200
    public_id = team_a.member_token.public_id
    assert client.delete(f"{TOKENS_URL}{public_id}/").status_code == 204
    assert client.get(TEAMS_URL).status_code == 401
    assert not ApiToken.objects.filter(public_id=public_id).exists()


def test_an_expired_token_is_refused(team_a):
    ApiToken.objects.filter(pk=team_a.member_token.pk).update(
        expiry=timezone.now() - timedelta(seconds=1)
    )
    assert token_client(team_a.member_raw_token).get(TEAMS_URL).status_code == 401


def test_a_wrong_token_is_refused(team_a):
    assert token_client("gpua_" + "0" * 64).get(TEAMS_URL).status_code == 401


def test_last_use_is_recorded(team_a):
    assert team_a.member_token.last_used_at is None
    before = timezone.now()
    token_client(team_a.member_raw_token).get(TEAMS_URL)
    token = ApiToken.objects.get(pk=team_a.member_token.pk)
    assert token.last_used_at is not None and token.last_used_at >= before


@pytest.mark.parametrize("days", [0, 366, "soon", -1])
def test_token_lifetime_outside_one_day_to_a_year_is_a_400_naming_the_field(team_a, days):
    response = session_client(team_a.member).post(
        TOKENS_URL, {"name": "x", "expires_in_days": days}, format="json"
    )
    assert response.status_code == 400
    assert "expires_in_days" in response.json()


def test_a_token_with_null_lifetime_never_expires(team_a):
    response = session_client(team_a.member).post(
        TOKENS_URL, {"name": "forever", "expires_in_days": None}, format="json"
    )
    assert response.status_code == 201
    assert response.json()["expiry"] is None


def test_members_see_their_own_tokens_and_admins_see_the_whole_team(team_a):
    member_view = session_client(team_a.member).get(TOKENS_URL).json()["results"]
    admin_view = session_client(team_a.admin).get(TOKENS_URL).json()["results"]
    assert {row["name"] for row in member_view} == {"member tool"}
    assert {row["name"] for row in admin_view} == {"member tool", "admin tool"}


def test_a_token_acts_only_for_its_own_team(team_a, team_b):
    from accounts.models import Membership

    # A person in two teams: their Alpha token must not reach Bravo.
    Membership.objects.create(team=team_b.team, user=team_a.member)
    teams = token_client(team_a.member_raw_token).get(TEAMS_URL).json()["results"]
    assert [t["slug"] for t in teams] == ["alpha"]
    session_teams = session_client(team_a.member).get(TEAMS_URL).json()["results"]
    assert sorted(t["slug"] for t in session_teams) == ["alpha", "bravo"]


def test_the_tokens_page_creates_shows_once_and_revokes(client, team_a):
    client.force_login(team_a.member)
    page = client.post(
        "/account/tokens/",
        {"name": "from the page", "team": team_a.team.pk, "expires_in_days": 30},
    )
    assert page.status_code == 200
    token = ApiToken.objects.get(name="from the page")
    raw = page.context["created_token"]
    assert raw.startswith(token.token_key) and raw in page.content.decode()
    again = client.get("/account/tokens/").content.decode()
    assert raw not in again and token.token_key in again
    revoked = client.post(f"/account/tokens/{token.public_id}/revoke/")
    assert revoked.status_code == 302
    assert not ApiToken.objects.filter(pk=token.pk).exists()


def test_the_tokens_page_refuses_a_team_you_are_not_in(client, team_a, team_b):
    client.force_login(team_a.member)
    page = client.post(
        "/account/tokens/", {"name": "sneaky", "team": team_b.team.pk, "expires_in_days": 30}
    )
    assert page.status_code == 200
    assert "team" in page.context["form"].errors
    assert not ApiToken.objects.filter(name="sneaky").exists()
