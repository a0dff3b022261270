"""Writes for teams, memberships and API tokens. The rules for who may hold which token live here,
so the API, the web pages and the admin cannot disagree about them."""

from datetime import datetime, timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from knox.models import get_digest_token
from knox.settings import CONSTANTS

from accounts.models import TOKEN_LIFETIME_MAX_DAYS, ApiToken, Membership, Team

# Enough for every pipeline and laptop a person runs; a leak that mints tokens in a loop stops here.
LIVE_TOKENS_PER_USER_PER_TEAM_MAX = 50


class Refused(ValueError):
    """A write the rules forbid. `field` names the input at fault, when there is one."""

    def __init__(self, reason: str, *, field: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.field = field


def _token_expiry_check(
    *,
    cap_days: int | None,
    expires_in: timedelta | None,
    expires_at: datetime | None,
    created_with: ApiToken | None,
    team_name: str,
) -> None:
    field = "expires_in_days"
    if expires_in is not None and expires_in > timedelta(days=TOKEN_LIFETIME_MAX_DAYS):
        raise Refused(f"A token lives at most {TOKEN_LIFETIME_MAX_DAYS} days.", field=field)
    if cap_days is not None and (expires_in is None or expires_in > timedelta(days=cap_days)):
        raise Refused(f"Team {team_name} allows tokens of at most {cap_days} days.", field=field)
    if created_with is not None:
        if expires_at is None:
            raise Refused(
                "A token cannot create a token that never expires; give expires_in_days "
                "(sign in on the web to create one without expiry).",
                field=field,
            )
        if created_with.expiry is not None and expires_at > created_with.expiry:
            raise Refused(
                "A token cannot create a token that outlives it: this token expires at "
                f"{created_with.expiry.isoformat()}.",
                field=field,
            )


def api_token_create(
    *,
    user: AbstractBaseUser,
    team: Team,
    name: str,
    expires_in: timedelta | None,
    created_with: ApiToken | None = None,
) -> tuple[ApiToken, str]:
    """Returns the token row and the raw token, which is shown once and never stored.

    `created_with` is the token the request authenticated with (None for a signed-in session):
    a token may only create tokens that expire, and no later than itself. Raises Refused."""
    with transaction.atomic():
        # Locks, team first then membership (the order every write here takes them): the cap is
        # read fresh and cannot change under us, creations of one team run one at a time (the
        # count below stays exact), and a concurrent removal of the member either happens first
        # (refused here) or waits and then revokes this token too.
        team = Team.objects.select_for_update().get(pk=team.pk)
        if not _membership_locked(user_id=user.pk, team_id=team.pk):
            raise PermissionError(f"{user} is not a member of {team}")
        now = timezone.now()
        expires_at = None if expires_in is None else now + expires_in
        _token_expiry_check(
            cap_days=team.max_token_lifetime_days,
            expires_in=expires_in,
            expires_at=expires_at,
            created_with=created_with,
            team_name=team.name,
        )
        live = ApiToken.objects.filter(user=user, team=team).filter(
            Q(expiry__isnull=True) | Q(expiry__gt=now)
        )
        if live.count() >= LIVE_TOKENS_PER_USER_PER_TEAM_MAX:
            raise Refused(
                f"You already have {LIVE_TOKENS_PER_USER_PER_TEAM_MAX} live tokens in "
                f"{team.name}; revoke one you no longer use first."
            )
        # knox's manager takes a duration and adds its own, later "now"; storing the moment we
        # checked keeps "expires no later than the creating token" exact.
        digest, raw = get_digest_token()
        token = ApiToken(
            token_key=raw[: CONSTANTS.TOKEN_KEY_LENGTH],
            digest=digest,
            user=user,
            team=team,
            name=name,
            expiry=expires_at,
        )
        token.save(force_insert=True)
    return token, raw


def _membership_locked(*, user_id: int, team_id: int) -> Membership | None:
    return (
        Membership.objects.select_for_update()
        .filter(user_id=user_id, team_id=team_id)
        .order_by()
        .first()
    )


def api_token_revoke(*, token: ApiToken) -> None:
    token.delete()


def api_tokens_of_membership_revoke(*, user_id: int, team_id: int) -> int:
    """Revokes a user's tokens in one team (they left it); returns how many there were."""
    deleted, _ = ApiToken.objects.filter(user_id=user_id, team_id=team_id).delete()
    return deleted


def api_tokens_visible(
    *, user: AbstractBaseUser, team_ids: set[int], admin_team_ids: set[int]
) -> QuerySet[ApiToken]:
    """A user's own tokens in the visible teams, and every token of the teams they administer."""
    return (
        ApiToken.objects.filter(team_id__in=team_ids)
        .filter(Q(user=user) | Q(team_id__in=admin_team_ids))
        .select_related("user", "team")
    )


def team_token_lifetime_cap_set(*, team: Team, max_days: int | None) -> int:
    """Caps the team's token lifetime; live tokens that would outlive the new cap are cut to it
    (a cap that left older, longer tokens alive would not be a cap). Returns how many were cut."""
    if max_days is not None and not 1 <= max_days <= TOKEN_LIFETIME_MAX_DAYS:
        raise Refused(
            f"A team's cap is 1 to {TOKEN_LIFETIME_MAX_DAYS} days, or empty for none.",
            field="max_token_lifetime_days",
        )
    with transaction.atomic():
        team.max_token_lifetime_days = max_days
        team.save(update_fields=["max_token_lifetime_days"])
        if max_days is None:
            return 0
        latest = timezone.now() + timedelta(days=max_days)
        return (
            ApiToken.objects.filter(team=team)
            .filter(Q(expiry__isnull=True) | Q(expiry__gt=latest))
            .update(expiry=latest)
        )


def _last_admin_check(*, membership: Membership, actor_is_staff: bool) -> None:
    """Refuses to take away a team's only admin; staff may (they can always add one back)."""
    if actor_is_staff:
        return
    # Lock the team row, then read the roles afresh: two admins demoting each other at once must
    # not both see "there is another admin".
    Team.objects.select_for_update().filter(pk=membership.team_id).order_by().first()
    admin_ids = set(
        Membership.objects.filter(
            team_id=membership.team_id, role=Membership.Role.ADMIN
        ).values_list("pk", flat=True)
    )
    if admin_ids == {membership.pk}:
        raise Refused(
            f"{membership.user} is the only admin of {membership.team}; make someone else an "
            "admin first.",
            field="role",
        )


def membership_role_set(*, membership: Membership, role: str, actor_is_staff: bool) -> Membership:
    """Changes a member's role; raises Refused when that would leave the team without an admin."""
    with transaction.atomic():
        if role != Membership.Role.ADMIN:
            _last_admin_check(membership=membership, actor_is_staff=actor_is_staff)
        membership.role = role
        membership.save(update_fields=["role"])
    return membership


def membership_delete(*, membership: Membership, actor_is_staff: bool) -> None:
    """Removes a member (their tokens of the team are revoked by the post_delete signal in
    accounts/signals.py, which also covers the admin and cascades); raises Refused when that
    would leave the team without an admin."""
    with transaction.atomic():
        _last_admin_check(membership=membership, actor_is_staff=actor_is_staff)
        membership.delete()
