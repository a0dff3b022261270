"""Writes for teams, memberships and API tokens."""

from datetime import timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q, QuerySet

from accounts.models import ApiToken, Membership, Team


def api_token_create(
    *, user: AbstractBaseUser, team: Team, name: str, expires_in: timedelta | None
) -> tuple[ApiToken, str]:
    """Returns the token row and the raw token, which is shown once and never stored."""
    if not Membership.objects.filter(user=user, team=team).exists():
        raise PermissionError(f"{user} is not a member of {team}")
    return ApiToken.objects.create(user=user, team=team, name=name, expiry=expires_in)


def api_token_revoke(*, token: ApiToken) -> None:
    token.delete()


def api_tokens_visible(
    *, user: AbstractBaseUser, team_ids: set[int], admin_team_ids: set[int]
) -> QuerySet[ApiToken]:
    """A user's own tokens in the visible teams, and every token of the teams they administer."""
    return (
        ApiToken.objects.filter(team_id__in=team_ids)
        .filter(Q(user=user) | Q(team_id__in=admin_team_ids))
        .select_related("user", "team")
    )
