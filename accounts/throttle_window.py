"""An exact sliding-window rate limit in Redis, one atomic step per request.

DRF's throttles read a caller's history, then write it back: two workers reading at once both
see room, and 120/min let 147 requests through in 20 s. Here one Lua script drops the entries
older than the window, counts, and records the request only when it fits, atomically, with the
clock of Redis itself (so hosts with skewed clocks agree). The window is the rate's duration
ending now, as DRF's is.
"""

import uuid
from functools import lru_cache

import redis
from django.conf import settings

_HIT = """
local now = redis.call('TIME')
local now_us = tonumber(now[1]) * 1000000 + tonumber(now[2])
local window_us = tonumber(ARGV[1]) * 1000000
local limit = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now_us - window_us)
if redis.call('ZCARD', KEYS[1]) < limit then
  redis.call('ZADD', KEYS[1], now_us, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], math.ceil(window_us / 1000))
  return {1, 0}
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {0, tonumber(oldest[2]) + window_us - now_us}
"""


def shared_window() -> "SlidingWindow | None":
    """The window on the configured Redis cache; None when the cache is not Redis (local
    memory counts in each process)."""
    cache = settings.CACHES["default"]
    if not cache["BACKEND"].endswith("RedisCache"):
        return None
    options = cache.get("OPTIONS", {})
    return _window(
        cache["LOCATION"],
        options.get("socket_connect_timeout"),
        options.get("socket_timeout"),
    )


@lru_cache(maxsize=8)
def _window(location: str, connect_timeout_s: float | None, timeout_s: float | None):
    client = redis.Redis.from_url(
        location, socket_connect_timeout=connect_timeout_s, socket_timeout=timeout_s
    )
    return SlidingWindow(client)


class SlidingWindow:
    def __init__(self, client: redis.Redis) -> None:
        self._hit = client.register_script(_HIT)

    def hit(self, key: str, *, limit: int, window_s: int) -> tuple[bool, float]:
        """(allowed, seconds until a request would be allowed); the request counts if allowed.
        Raises redis' errors when Redis does not answer."""
        allowed, wait_us = self._hit(
            keys=[f"throttle-window:{key}"], args=[window_s, limit, uuid.uuid4().hex]
        )
        return bool(allowed), max(0.0, int(wait_us) / 1e6)
