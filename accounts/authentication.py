from datetime import timedelta

from django.utils import timezone
from knox.auth import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed

from accounts.models import ApiToken, Membership

# Record use at most once a minute per token: a write on every request would cost more than
# the answer is worth.
LAST_USED_RESOLUTION = timedelta(minutes=1)


class ApiTokenAuthentication(TokenAuthentication):
    """`Authorization: Token <token>`. Refused: expired tokens (knox deletes them), tokens of
    inactive users (knox), and tokens whose user is no longer a member of the token's team."""

    def authenticate_credentials(self, token: bytes) -> tuple:
        user, api_token = super().authenticate_credentials(token)
        # One indexed lookup (the unique team+user constraint) on every request: removing a member
        # revokes their tokens too, but the boundary must not depend on that having happened.
        if not Membership.objects.filter(user_id=user.pk, team_id=api_token.team_id).exists():
            raise AuthenticationFailed("This token's user is no longer a member of its team.")
        now = timezone.now()
        if api_token.last_used_at is None or now - api_token.last_used_at > LAST_USED_RESOLUTION:
            ApiToken.objects.filter(pk=api_token.pk).update(last_used_at=now)
            api_token.last_used_at = now
        return user, api_token
