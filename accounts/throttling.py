"""DRF throttles whose rates are read from settings at request time, in the shared cache.

With CACHE_URL pointing at Redis, every gunicorn worker and host counts against the same limit,
exactly: each request is one atomic step of a sliding window in Redis (throttle_window.py).
Without Redis (local memory), or while Redis is down or hung, the throttles count in each
process instead (logged), exactly within the process: the API keeps answering, each worker
still limiting what it sees, so N processes let up to N times the rate through.
"""

import logging
import threading
import time

from django.conf import settings
from django.core.cache.backends.locmem import LocMemCache
from redis.exceptions import RedisError
from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle, SimpleRateThrottle, UserRateThrottle

from accounts.models import ApiToken
from accounts.throttle_window import shared_window

logger = logging.getLogger(__name__)

# What a cache that is down, refusing or hung raises through Django's Redis backend.
CACHE_ERRORS = (RedisError, OSError)

_counts_in_process = LocMemCache("throttles-in-process", {"OPTIONS": {"MAX_ENTRIES": 10_000}})
# DRF's history is read, then written: one thread at a time in a process makes that exact.
_in_process_lock = threading.Lock()


class _SharedCacheState:
    # time.monotonic() before which the shared cache is not tried again: one timeout per
    # CACHE_RETRY_AFTER_S and process, not one per request.
    down_until_s = 0.0


class _FailOpen:
    def allow_request(self, request, view) -> bool:
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        if time.monotonic() >= _SharedCacheState.down_until_s:
            try:
                return self._allow_shared(request, view)
            except CACHE_ERRORS as error:
                _SharedCacheState.down_until_s = time.monotonic() + settings.CACHE_RETRY_AFTER_S
                logger.warning(
                    "throttling counts in this process for %s s: the cache is unreachable (%s)",
                    settings.CACHE_RETRY_AFTER_S,
                    error,
                )
        self.cache = _counts_in_process
        with _in_process_lock:
            return super().allow_request(request, view)

    def _allow_shared(self, request, view) -> bool:
        window = shared_window()
        if window is None:  # a cache in local memory: this process's own counts
            with _in_process_lock:
                return super().allow_request(request, view)
        allowed, self._wait_s = window.hit(
            self.key, limit=self.num_requests, window_s=self.duration
        )
        return allowed

    def wait(self) -> float | None:
        wait_s = getattr(self, "_wait_s", None)
        return wait_s if wait_s is not None else super().wait()


class _RateFromSettings(_FailOpen):
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


class TokenCreateThrottle(_RateFromSettings, UserRateThrottle):
    """Token creation per user, on the API and the web page alike (they share the budget)."""

    scope = "token_create"
