from datetime import timedelta

from django.utils import timezone
from knox.auth import TokenAuthentication

from accounts.models import ApiToken

# Record use at most once a minute per token: a write on every request would cost more than
# the answer is worth.
LAST_USED_RESOLUTION = timedelta(minutes=1)


class ApiTokenAuthentication(TokenAuthentication):
    """`Authorization: Token <token>`; expired tokens are refused (knox deletes them)."""

    def authenticate_credentials(self, token: bytes) -> tuple:
        user, api_token = super().authenticate_credentials(token)
        now = timezone.now()
        if api_token.last_used_at is None or now - api_token.last_used_at > LAST_USED_RESOLUTION:
            ApiToken.objects.filter(pk=api_token.pk).update(last_used_at=now)
            api_token.last_used_at = now
        return user, api_token
