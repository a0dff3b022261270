"""CSRF: browser forms and session API calls need the token; API-token calls do not."""

from django.test import Client
from rest_framework.test import APIClient

from accounts.models import ApiToken
from tests.helpers import token_client


def test_a_web_form_post_without_the_csrf_token_is_refused(team_a):
    client = Client(enforce_csrf_checks=True)
    client.force_login(team_a.member)
    response = client.post("/account/tokens/", {"name": "forged", "team": team_a.team.pk})
    assert response.status_code == 403
    assert not ApiToken.objects.filter(name="forged").exists()


def test_a_web_form_post_with_the_csrf_token_goes_through(team_a):
    client = Client(enforce_csrf_checks=True)
    client.force_login(team_a.member)
    client.get("/account/tokens/")
    response = client.post(
        "/account/tokens/",
        {
            "name": "legit",
            "team": team_a.team.pk,
            "expires_in_days": 5,
            "csrfmiddlewaretoken": client.cookies["csrftoken"].value,
        },
    )
    assert response.status_code == 200
    assert ApiToken.objects.filter(name="legit").exists()


def test_a_session_authenticated_api_post_without_csrf_is_refused(team_a):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(team_a.member)
    response = client.post("/api/v1/tokens/", {"name": "forged"}, format="json")
    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]
    assert not ApiToken.objects.filter(name="forged").exists()


def test_a_token_authenticated_api_call_needs_no_csrf_token(team_a):
    client = token_client(team_a.member_raw_token)
    client.enforce_csrf_checks = True
    client.handler.enforce_csrf_checks = True
    response = client.post(
        "/api/v1/tokens/", {"name": "from a script", "expires_in_days": 7}, format="json"
    )
    assert response.status_code == 201
