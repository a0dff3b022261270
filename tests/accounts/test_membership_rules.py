"""Memberships: a team keeps at least one admin, and a member who leaves (however they leave)
takes their tokens of the team with them. The only-admin and revocation tests failed before
those rules existed; the deactivated-user, user-deletion and role-permission tests pin what
already held (knox, cascades, the admin check)."""

from django.contrib.auth import get_user_model

from accounts.models import ApiToken, Membership
from accounts.services import api_token_create
from tests.helpers import PASSWORD, session_client, token_client

MEMBERSHIPS_URL = "/api/v1/memberships/"


def membership_url(team_setup, user) -> str:
    return f"{MEMBERSHIPS_URL}{Membership.objects.get(team=team_setup.team, user=user).pk}/"


def admins_of(team_setup) -> set[str]:
    return set(
        Membership.objects.filter(team=team_setup.team, role=Membership.Role.ADMIN).values_list(
            "user__username", flat=True
        )
    )


def test_the_only_admin_cannot_demote_themselves(team_a):
    response = session_client(team_a.admin).patch(
        membership_url(team_a, team_a.admin), {"role": "member"}, format="json"
    )
    assert response.status_code == 400
    assert "only admin" in response.json()["role"][0]
    assert admins_of(team_a) == {team_a.admin.username}


def test_the_only_admin_cannot_leave(team_a):
    for client in (session_client(team_a.admin), token_client(team_a.admin_raw_token)):
        response = client.delete(membership_url(team_a, team_a.admin))
        assert response.status_code == 400
        assert "only admin" in response.json()["role"][0]
    assert admins_of(team_a) == {team_a.admin.username}


def test_with_a_second_admin_the_first_may_step_down(team_a):
    promoted = session_client(team_a.admin).patch(
        membership_url(team_a, team_a.member), {"role": "admin"}, format="json"
    )
    assert promoted.status_code == 200
    demoted = session_client(team_a.admin).patch(
        membership_url(team_a, team_a.admin), {"role": "member"}, format="json"
    )
    assert demoted.status_code == 200
    # Now the former member is the only admin, and is held to the same rule.
    leaving = session_client(team_a.member).delete(membership_url(team_a, team_a.member))
    assert leaving.status_code == 400
    assert admins_of(team_a) == {team_a.member.username}


def test_staff_may_remove_the_only_admin(team_a):
    team_a.admin.is_staff = True
    team_a.admin.save(update_fields=["is_staff"])
    response = session_client(team_a.admin).delete(membership_url(team_a, team_a.admin))
    assert response.status_code == 204
    assert admins_of(team_a) == set()


def test_the_django_admin_still_lets_staff_remove_the_only_admin(client, team_a):
    staff = get_user_model().objects.create_superuser("staff", password=PASSWORD)
    client.force_login(staff)
    membership = Membership.objects.get(team=team_a.team, user=team_a.admin)
    others = Membership.objects.get(team=team_a.team, user=team_a.member)
    form = {
        "name": "Alpha",
        "slug": "alpha",
        "max_token_lifetime_days": "",
        "memberships-TOTAL_FORMS": 2,
        "memberships-INITIAL_FORMS": 2,
        "memberships-0-id": membership.pk,
        "memberships-0-team": team_a.team.pk,
        "memberships-0-user": team_a.admin.pk,
        "memberships-0-role": "admin",
        "memberships-0-DELETE": "on",
        "memberships-1-id": others.pk,
        "memberships-1-team": team_a.team.pk,
        "memberships-1-user": team_a.member.pk,
        "memberships-1-role": "member",
    }
    response = client.post(f"/admin/accounts/team/{team_a.team.pk}/change/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert admins_of(team_a) == set()
    # And the removal revoked the admin's tokens of the team, as on the API.
    assert not ApiToken.objects.filter(user=team_a.admin, team=team_a.team).exists()


def test_a_member_may_still_leave_and_their_tokens_go(team_a):
    response = session_client(team_a.member).delete(membership_url(team_a, team_a.member))
    assert response.status_code == 204
    assert not ApiToken.objects.filter(user=team_a.member).exists()
    assert token_client(team_a.member_raw_token).get("/api/v1/teams/").status_code == 401


def test_deleting_a_user_removes_their_memberships_and_tokens(team_a):
    api_token_create(user=team_a.member, team=team_a.team, name="second", expires_in=None)
    team_a.member.delete()
    assert not ApiToken.objects.filter(name__in=["member tool", "second"]).exists()


def test_a_member_cannot_change_roles(team_a):
    response = session_client(team_a.member).patch(
        membership_url(team_a, team_a.member), {"role": "admin"}, format="json"
    )
    assert response.status_code == 403
    assert admins_of(team_a) == {team_a.admin.username}


def test_a_deactivated_users_token_and_session_are_refused(team_a):
    """knox refuses inactive users' tokens, and Django drops their sessions; proven here."""
    session = session_client(team_a.member)
    team_a.member.is_active = False
    team_a.member.save(update_fields=["is_active"])
    assert token_client(team_a.member_raw_token).get("/api/v1/teams/").status_code == 401
    assert session.get("/api/v1/teams/").status_code in {401, 403}
    assert session.get("/jobs/").status_code == 302
