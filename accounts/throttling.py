"""DRF throttles whose rates are read from settings at request time, in the shared cache.

With CACHE_URL pointing at Redis, every gunicorn worker and host counts against the same limit.
"""

from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle, SimpleRateThrottle, UserRateThrottle

from accounts.models import ApiToken


class _RateFromSettings:
    scope: str

    def get_rate(self) -> str | None:
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)


class AnonymousThrottle(_RateFromSettings, AnonRateThrottle):
    scope = "anon"


class PerUserThrottle(_RateFromSettings, UserRateThrottle):
    scope = "user"


class PerTeamThrottle(_RateFromSettings, SimpleRateThrottle):
    """All of a team's tokens share one budget, so a runaway script cannot starve the others."""

    scope = "team"

    def get_cache_key(self, request, view) -> str | None:
        if not isinstance(request.auth, ApiToken):
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.auth.team_id}
