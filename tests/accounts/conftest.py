"""Two teams, each with an admin and a member, and an API token per person."""

from dataclasses import dataclass
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from accounts.models import ApiToken, Membership, Team
from accounts.services import api_token_create

PASSWORD = "correct-horse-battery-staple"


@dataclass
class TeamSetup:
    team: Team
    admin: object
    member: object
    admin_token: ApiToken
    admin_raw_token: str
    member_token: ApiToken
    member_raw_token: str


def make_team(name: str) -> TeamSetup:
    users = get_user_model().objects
    team = Team.objects.create(name=name, slug=name.lower())
    admin = users.create_user(f"{name.lower()}-admin", password=PASSWORD)
    member = users.create_user(f"{name.lower()}-member", password=PASSWORD)
    Membership.objects.create(team=team, user=admin, role=Membership.Role.ADMIN)
    Membership.objects.create(team=team, user=member, role=Membership.Role.MEMBER)
    admin_token, admin_raw = api_token_create(
        user=admin, team=team, name="admin tool", expires_in=timedelta(days=30)
    )
    member_token, member_raw = api_token_create(
        user=member, team=team, name="member tool", expires_in=timedelta(days=30)
    )
    return TeamSetup(team, admin, member, admin_token, admin_raw, member_token, member_raw)


@pytest.fixture
def team_a(db) -> TeamSetup:
    return make_team("Alpha")


@pytest.fixture
def team_b(db) -> TeamSetup:
    return make_team("Bravo")


def token_client(raw_token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {raw_token}")
    return client


def session_client(user) -> APIClient:
    client = APIClient(enforce_csrf_checks=False)
    client.force_login(user)
    return client
