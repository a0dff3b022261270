"""The team boundary, in one place. Every private lookup goes through it.

The team comes from the credential: an API token acts for its own team only, and only while its
user is a member (authentication refuses it otherwise); a signed-in user acts for the teams they
belong to (and creates in the team chosen on their settings page).
Never from the request body. Objects of other teams are filtered out of the queryset, so they
answer 404, exactly like objects that do not exist.
"""

from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest
from rest_framework.request import Request

from accounts.models import ApiToken, Membership, Team

ACTIVE_TEAM_SESSION_KEY = "active_team_id"


def request_team_ids(request: HttpRequest | Request) -> set[int]:
    """The teams this request may see."""
    user = request.user
    if not user.is_authenticated:
        return set()
    auth = getattr(request, "auth", None)
    if isinstance(auth, ApiToken):
        return {auth.team_id}
    return set(Membership.objects.filter(user=user).values_list("team_id", flat=True))


def session_active_team(request: HttpRequest | Request) -> Team | None:
    """The team a signed-in user chose to work in (default: their first), if they have any."""
    teams = Team.objects.filter(memberships__user=request.user).order_by("name")
    chosen = request.session.get(ACTIVE_TEAM_SESSION_KEY)
    return (teams.filter(pk=chosen).first() if chosen else None) or teams.first()


def request_active_team(request: HttpRequest | Request) -> Team:
    """The team new objects belong to. Django's PermissionDenied: a page answers it with
    templates/403.html, and DRF answers it as a 403 with this message as its detail."""
    auth = getattr(request, "auth", None)
    if isinstance(auth, ApiToken):
        return auth.team
    team = session_active_team(request)
    if team is None:
        raise PermissionDenied("You are not a member of any team. Ask a team admin to add you.")
    return team


def request_admin_team_ids(request: HttpRequest | Request) -> set[int]:
    """The teams in which this request may manage members and everyone's tokens."""
    visible = request_team_ids(request)
    return set(
        Membership.objects.filter(
            user=request.user, team_id__in=visible, role=Membership.Role.ADMIN
        ).values_list("team_id", flat=True)
    )


class TeamScopedMixin:
    """For DRF viewsets: restrict every lookup to the caller's teams."""

    team_field = "team"

    def get_queryset(self) -> QuerySet:
        queryset = super().get_queryset()
        return queryset.filter(**{f"{self.team_field}__in": request_team_ids(self.request)})
