"""What keeps a slow or failing Hub from stalling the site: remembered failures, a circuit
breaker and one read at a time.

A sizing request that names a Hub id is anonymous and is read by the web worker itself, so:
- a failed or unknown id is remembered (HUB_FAILURE_TTL_S, HUB_NOT_FOUND_TTL_S) and asking
  again answers at once with the same 400;
- after a timeout or a connection error the Hub is not asked for HUB_BREAKER_S (in this
  process, and in every process sharing the cache when it answers);
- at most HUB_CONCURRENT_READS Hub reads run at a time (across the processes sharing the cache
  when it answers, in this process otherwise); a request waits HUB_SLOT_WAIT_S for a turn.
The cache failing never fails a request: each piece falls back to this process's own state.
"""

import contextlib
import hashlib
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from redis.exceptions import RedisError

# What a cache that is down, refusing or hung raises through Django's Redis backend.
_CACHE_ERRORS = (RedisError, OSError)
_SLOT_POLL_S = 0.05


@dataclass(frozen=True)
class RememberedFailure:
    code: str
    message: str
    at_s: float  # time.time() of the failure


def _endpoint_key(kind: str, *parts: str) -> str:
    where = "|".join((settings.HF_ENDPOINT, *parts))
    return f"hub-{kind}:" + hashlib.sha256(where.encode()).hexdigest()


def _cache_call(method: str, *args, **kwargs):
    with contextlib.suppress(*_CACHE_ERRORS):
        return getattr(cache, method)(*args, **kwargs)
    return None


class _ProcessState:
    """This process's own copy: used when the cache does not answer, and read first."""

    lock = threading.Lock()
    breaker_until_s: dict[str, float] = {}  # endpoint -> time.monotonic() it closes again
    breaker_reason: dict[str, str] = {}
    reads: threading.BoundedSemaphore | None = None  # made at first use, from the setting


def hub_state_reset() -> None:
    """Forget this process's breaker and read slots (tests; a changed setting)."""
    with _ProcessState.lock:
        _ProcessState.breaker_until_s.clear()
        _ProcessState.breaker_reason.clear()
        _ProcessState.reads = None


def _process_reads() -> threading.BoundedSemaphore:
    with _ProcessState.lock:
        if _ProcessState.reads is None:
            _ProcessState.reads = threading.BoundedSemaphore(_concurrent_reads())
        return _ProcessState.reads


def _concurrent_reads() -> int:
    return max(1, settings.HUB_CONCURRENT_READS)


# Remembered failures, per id and revision.


def failure_remember(where: str, *, code: str, message: str, ttl_s: float) -> None:
    key = _endpoint_key("failure", where)
    _cache_call("set", key, (code, message, time.time()), ttl_s)


def failure_recall(where: str) -> RememberedFailure | None:
    value = _cache_call("get", _endpoint_key("failure", where))
    if not value:
        return None
    code, message, at_s = value
    return RememberedFailure(code, message, at_s)


# The circuit breaker, per endpoint.


def breaker_open(reason: str) -> None:
    """The Hub timed out or could not be reached: do not ask it for HUB_BREAKER_S."""
    seconds = settings.HUB_BREAKER_S
    with _ProcessState.lock:
        _ProcessState.breaker_until_s[settings.HF_ENDPOINT] = time.monotonic() + seconds
        _ProcessState.breaker_reason[settings.HF_ENDPOINT] = reason
    _cache_call("set", _endpoint_key("breaker"), (reason, time.time() + seconds), seconds)


def breaker_reason() -> tuple[str, float] | None:
    """(why, seconds until the Hub is asked again) while the breaker is open, else None."""
    endpoint = settings.HF_ENDPOINT
    with _ProcessState.lock:
        left_s = _ProcessState.breaker_until_s.get(endpoint, 0.0) - time.monotonic()
        if left_s > 0:
            return _ProcessState.breaker_reason[endpoint], left_s
    shared = _cache_call("get", _endpoint_key("breaker"))
    if shared:
        reason, until_s = shared
        if until_s > time.time():
            return reason, until_s - time.time()
    return None


# One read at a time.


def read_slot_take(*, wait_s: float) -> Callable[[], None] | None:
    """A turn to read the Hub, as the function that gives it back; None when no turn came free
    within `wait_s`. Whoever ends the read calls it (the reading thread, which may outlive the
    request that started it)."""
    reads = _process_reads()
    give_up_s = time.monotonic() + max(0.0, wait_s)
    if not reads.acquire(timeout=max(0.0, wait_s)):
        return None
    shared = _shared_slot_take(give_up_s=give_up_s)
    if shared is False:
        reads.release()
        return None

    def give_back() -> None:
        if isinstance(shared, str):
            _shared_slot_give_back(shared)
        reads.release()

    return give_back


def _shared_slot_take(*, give_up_s: float) -> str | bool | None:
    """The key of a shared slot taken; None when the cache does not answer (this process's own
    slot is the limit then); False when every shared slot stayed busy until `give_up_s`."""
    owner = uuid.uuid4().hex
    # A holder that dies frees its slot when the key expires: one whole read at most.
    ttl_s = int(settings.HUB_TIMEOUT_S) + 2
    while True:
        for index in range(_concurrent_reads()):
            key = _endpoint_key("slot", str(index))
            try:
                if cache.add(key, owner, ttl_s):
                    return f"{key}|{owner}"
            except _CACHE_ERRORS:
                return None
        if time.monotonic() >= give_up_s:
            return False
        time.sleep(_SLOT_POLL_S)


def _shared_slot_give_back(taken: str) -> None:
    key, owner = taken.split("|")
    if _cache_call("get", key) == owner:
        _cache_call("delete", key)
