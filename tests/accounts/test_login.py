"""Signing in and out on the web, and the lockout after repeated failures (django-axes)."""

from django.http import HttpResponse
from django.test import Client

from tests.helpers import PASSWORD


def _right_password_after_failures(url: str, user, failures: int) -> tuple[Client, HttpResponse]:
    """`failures` sign-ins with a wrong password at `url`, then one with the right password."""
    client = Client()
    for _ in range(failures):
        client.post(url, {"username": user.username, "password": "no"})
    return client, client.post(url, {"username": user.username, "password": PASSWORD})


def test_sign_in_then_sign_out(team_a):
    client = Client()
    response = client.post(
        "/account/login/", {"username": team_a.member.username, "password": PASSWORD}
    )
    assert response.status_code == 302 and response["Location"] == "/account/tokens/"
    assert client.get("/account/tokens/").status_code == 200
    client.post("/account/logout/")
    assert client.get("/account/tokens/").status_code == 302  # back to the login page


def test_repeated_failures_lock_the_account_even_for_the_right_password(team_a, settings):
    settings.AXES_FAILURE_LIMIT = 3
    client, response = _right_password_after_failures("/account/login/", team_a.member, 3)
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session


def test_admin_login_is_locked_out_the_same_way(team_a, settings):
    settings.AXES_FAILURE_LIMIT = 2
    team_a.admin.is_staff = True
    team_a.admin.save()
    _, response = _right_password_after_failures("/admin/login/", team_a.admin, 2)
    assert response.status_code == 429


def test_the_admin_refuses_non_staff_users(team_a):
    client = Client()
    client.force_login(team_a.member)
    response = client.get("/admin/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
