"""The rules on creating API tokens, one service behind the API and the web page: a token mints
only shorter-lived tokens, the team's lifetime cap, 50 live tokens per person per team, the
creation throttle, and the one-query membership check. Each rule's tests failed before it
existed; the first test pins what stays (a signed-in session may create a token that never
expires)."""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIRequestFactory

from accounts.authentication import ApiTokenAuthentication
from accounts.models import ApiToken
from accounts.services import LIVE_TOKENS_PER_USER_PER_TEAM_MAX, Refused, api_token_create
from tests.helpers import session_client, token_client

TOKENS_URL = "/api/v1/tokens/"


def team_url(team) -> str:
    return f"/api/v1/teams/{team.pk}/"


def create(client, days, name="new"):
    return client.post(TOKENS_URL, {"name": name, "expires_in_days": days}, format="json")


def test_a_session_may_still_create_a_token_without_expiry(team_a):
    response = create(session_client(team_a.member), None)
    assert response.status_code == 201 and response.json()["expiry"] is None


def test_a_token_that_never_expires_may_mint_tokens_that_do(team_a):
    _, forever = api_token_create(
        user=team_a.member, team=team_a.team, name="forever", expires_in=None
    )
    assert create(token_client(forever), 365).status_code == 201
    assert create(token_client(forever), None).status_code == 400


def test_a_token_exactly_as_long_as_its_parent_is_refused_for_the_moment_between(team_a):
    """A 1-day token asking for 1 day, a moment later, would outlive itself by that moment."""
    _, day = api_token_create(
        user=team_a.member, team=team_a.team, name="day", expires_in=timedelta(days=1)
    )
    assert create(token_client(day), 1).status_code == 400


# The team's cap.


def test_a_team_admin_sets_the_cap_and_members_cannot(team_a):
    assert (
        session_client(team_a.member)
        .patch(team_url(team_a.team), {"max_token_lifetime_days": 7}, format="json")
        .status_code
        == 403
    )
    response = session_client(team_a.admin).patch(
        team_url(team_a.team), {"max_token_lifetime_days": 7}, format="json"
    )
    assert response.status_code == 200 and response.json()["max_token_lifetime_days"] == 7
    team_a.team.refresh_from_db()
    assert team_a.team.max_token_lifetime_days == 7


def test_an_admin_token_may_set_the_cap_but_not_rename_the_team(team_a):
    response = token_client(team_a.admin_raw_token).patch(
        team_url(team_a.team), {"max_token_lifetime_days": 10, "name": "Renamed"}, format="json"
    )
    assert response.status_code == 200
    team_a.team.refresh_from_db()
    assert (team_a.team.max_token_lifetime_days, team_a.team.name) == (10, "Alpha")


@pytest.mark.parametrize("days", [0, 366, "a week"])
def test_a_cap_outside_one_day_to_a_year_is_a_400_naming_the_field(team_a, days):
    response = session_client(team_a.admin).patch(
        team_url(team_a.team), {"max_token_lifetime_days": days}, format="json"
    )
    assert response.status_code == 400 and "max_token_lifetime_days" in response.json()


def test_put_on_a_team_is_not_allowed(team_a):
    response = session_client(team_a.admin).put(
        team_url(team_a.team), {"max_token_lifetime_days": 7}, format="json"
    )
    assert response.status_code == 405


@pytest.fixture
def capped(team_a):
    session_client(team_a.admin).patch(
        team_url(team_a.team), {"max_token_lifetime_days": 7}, format="json"
    )
    return team_a


@pytest.mark.parametrize("days", [8, None])
def test_a_creation_past_the_cap_is_a_400_with_the_reason(capped, days):
    for client in (session_client(capped.admin), token_client(capped.admin_raw_token)):
        response = create(client, days)
        assert response.status_code == 400
        assert "at most 7 days" in str(response.json()["expires_in_days"])
    assert create(session_client(capped.admin), 7).status_code == 201


def test_setting_a_cap_cuts_live_tokens_that_would_outlive_it(team_a):
    api_token_create(user=team_a.member, team=team_a.team, name="forever", expires_in=None)
    session_client(team_a.admin).patch(
        team_url(team_a.team), {"max_token_lifetime_days": 7}, format="json"
    )
    latest = timezone.now() + timedelta(days=7)
    expiries = ApiToken.objects.filter(team=team_a.team).values_list("expiry", flat=True)
    assert all(expiry is not None and expiry <= latest for expiry in expiries)


def test_removing_the_cap_with_null(capped):
    response = session_client(capped.admin).patch(
        team_url(capped.team), {"max_token_lifetime_days": None}, format="json"
    )
    assert response.status_code == 200
    assert create(session_client(capped.admin), None).status_code == 201


def test_staff_set_the_cap_in_the_admin_and_it_applies(client, team_a):
    staff = get_user_model().objects.create_user("staff", password="x", is_staff=True)
    staff.is_superuser = True
    staff.save()
    client.force_login(staff)
    response = client.post(
        f"/admin/accounts/team/{team_a.team.pk}/change/",
        {
            "name": "Alpha",
            "slug": "alpha",
            "max_token_lifetime_days": 3,
            "memberships-TOTAL_FORMS": 0,
            "memberships-INITIAL_FORMS": 0,
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    team_a.team.refresh_from_db()
    assert team_a.team.max_token_lifetime_days == 3
    assert ApiToken.objects.get(pk=team_a.member_token.pk).expiry <= timezone.now() + timedelta(
        days=3
    )
    assert create(session_client(team_a.member), 4).status_code == 400


# The web page goes through the same service.


def test_the_tokens_page_applies_the_teams_cap(client, capped):
    client.force_login(capped.member)
    for days in (8, ""):
        page = client.post(
            "/account/tokens/", {"name": "web", "team": capped.team.pk, "expires_in_days": days}
        )
        assert page.status_code == 200 and page.context["created_token"] is None
        assert "at most 7 days" in str(page.context["form"].errors["expires_in_days"])
    assert not ApiToken.objects.filter(name="web").exists()


def test_the_tokens_page_applies_the_live_token_limit(client, team_a):
    fill_to_the_limit(team_a)
    client.force_login(team_a.member)
    page = client.post(
        "/account/tokens/", {"name": "one more", "team": team_a.team.pk, "expires_in_days": 1}
    )
    assert "revoke one" in str(page.context["form"].non_field_errors())
    assert not ApiToken.objects.filter(name="one more").exists()


# At most 50 live tokens per person per team.


def fill_to_the_limit(team_setup) -> None:
    existing = ApiToken.objects.filter(user=team_setup.member, team=team_setup.team).count()
    for number in range(LIVE_TOKENS_PER_USER_PER_TEAM_MAX - existing):
        api_token_create(
            user=team_setup.member,
            team=team_setup.team,
            name=f"t{number}",
            expires_in=timedelta(days=1),
        )


def test_the_fifty_first_live_token_is_a_400_with_the_reason(team_a):
    fill_to_the_limit(team_a)
    response = create(session_client(team_a.member), 1)
    assert response.status_code == 400
    assert "50 live tokens" in response.json()["non_field_errors"][0]


def test_expired_and_other_peoples_tokens_do_not_count(team_a):
    fill_to_the_limit(team_a)
    ApiToken.objects.filter(pk=team_a.member_token.pk).update(
        expiry=timezone.now() - timedelta(seconds=1)
    )
    assert create(session_client(team_a.member), 1).status_code == 201
    assert create(session_client(team_a.admin), 1).status_code == 201


def test_the_service_refuses_past_the_year_whoever_calls_it(team_a):
    with pytest.raises(Refused, match="365 days"):
        api_token_create(
            user=team_a.member, team=team_a.team, name="long", expires_in=timedelta(days=366)
        )


# The creation throttle (scope token_create).


@pytest.fixture
def two_creations_an_hour(settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "token_create": "2/hour",
        },
    }


def test_token_creation_is_throttled_per_user_and_reading_is_not(team_a, two_creations_an_hour):
    client = session_client(team_a.member)
    assert create(client, 1).status_code == 201
    assert create(client, 1).status_code == 201
    throttled = create(client, 1)
    assert throttled.status_code == 429 and int(throttled["Retry-After"]) > 0
    assert client.get(TOKENS_URL).status_code == 200
    assert create(session_client(team_a.admin), 1).status_code == 201


def test_the_web_page_shares_the_apis_creation_budget(client, team_a, two_creations_an_hour):
    api = session_client(team_a.member)
    assert create(api, 1).status_code == 201
    assert create(api, 1).status_code == 201
    client.force_login(team_a.member)
    page = client.post(
        "/account/tokens/", {"name": "web", "team": team_a.team.pk, "expires_in_days": 1}
    )
    assert page.status_code == 429 and int(page["Retry-After"]) > 0
    assert not ApiToken.objects.filter(name="web").exists()


# The membership check on authentication is one query.


def test_authenticating_a_token_checks_membership_in_one_indexed_query(team_a):
    request = APIRequestFactory().get(
        "/api/v1/teams/", HTTP_AUTHORIZATION=f"Token {team_a.member_raw_token}"
    )
    ApiToken.objects.filter(pk=team_a.member_token.pk).update(last_used_at=timezone.now())
    with CaptureQueriesContext(connection) as queries:
        user, token = ApiTokenAuthentication().authenticate(request)
    assert (user, token.pk) == (team_a.member, team_a.member_token.pk)
    membership_queries = [q["sql"] for q in queries if "accounts_membership" in q["sql"]]
    assert len(membership_queries) == 1
