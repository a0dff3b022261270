"""Probes: /healthz says the process is alive (and reaches its database), /readyz says whether
each service a request may need answers: the database, the cache and the broker."""

import logging
import threading
import time
import uuid
from collections.abc import Callable

from django.conf import settings
from django.core.cache import caches
from django.db import connection, connections
from django.http import HttpRequest, JsonResponse

logger = logging.getLogger(__name__)


def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness with a database round trip: a load balancer should stop sending traffic
    to a process that cannot reach its database."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as error:
        # The kind only: a probe is public, the message names hosts and users.
        logger.warning("healthz: database failed: %s", error)
        return JsonResponse(
            {"status": "error", "database": f"error ({type(error).__name__})"}, status=503
        )
    return JsonResponse({"status": "ok", "database": "ok"})


def _check_database() -> str:
    try:
        with connections["default"].cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    finally:
        connections["default"].close()  # this thread's own connection, opened for the probe
    return OK


def _check_cache() -> str:
    cache = caches["default"]
    probe = uuid.uuid4().hex
    cache.set("readyz:probe", probe, timeout=10)
    if cache.get("readyz:probe") != probe:
        raise RuntimeError("the cache did not return what was written")
    return OK


def _check_broker() -> str:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return NOT_USED
    from config.celery import app

    with app.connection_for_write(connect_timeout=settings.READYZ_TIMEOUT_S) as broker:
        broker.ensure_connection(max_retries=0)
        broker.default_channel  # noqa: B018 (opening the channel is the round trip: Redis PING)
    return OK


OK = "ok"
NOT_USED = "not used (tasks run in-process)"
CHECKS: dict[str, Callable[[], str]] = {
    "database": _check_database,
    "cache": _check_cache,
    "broker": _check_broker,
}


class _LastReadiness:
    """The last answer of this process, reused for READYZ_CACHE_S: thirty probes while Redis
    hangs cost one READYZ_TIMEOUT_S, not thirty (the lock makes concurrent ones wait for it)."""

    lock = threading.Lock()
    checked_at_s = float("-inf")  # time.monotonic()
    body: dict[str, str] = {}


def readiness_forget() -> None:
    """The next /readyz checks again (tests; nothing else needs it)."""
    with _LastReadiness.lock:
        _LastReadiness.checked_at_s = float("-inf")


def readyz(request: HttpRequest) -> JsonResponse:
    """Readiness: 200 only when the database, the cache and the broker all answer, 503 with
    which one did not otherwise. The checks run side by side, each given READYZ_TIMEOUT_S: a
    hung service makes the probe slow by that much, never longer. An answer is reused for
    READYZ_CACHE_S (its age in the Age header). Errors name their kind only; the details go
    to the log."""
    with _LastReadiness.lock:
        age_s = time.monotonic() - _LastReadiness.checked_at_s
        if age_s >= settings.READYZ_CACHE_S:
            _LastReadiness.body = _check_all()
            _LastReadiness.checked_at_s = time.monotonic()
            age_s = 0.0
        body = _LastReadiness.body
    ready = body["status"] == "ok"
    response = JsonResponse(body, status=200 if ready else 503)
    response["Age"] = str(int(age_s))
    response["Cache-Control"] = "no-store"
    return response


def _check_all() -> dict[str, str]:
    results: dict[str, str] = {}

    def run(name: str, check: Callable[[], str]) -> None:
        try:
            results[name] = check()
        except Exception as error:
            logger.warning("readyz: %s failed: %s", name, error)
            results[name] = f"error ({type(error).__name__})"

    # Daemon threads: one stuck on a hung service must not hold up this answer or shutdown.
    threads = [
        threading.Thread(target=run, args=(name, check), daemon=True)
        for name, check in CHECKS.items()
    ]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + settings.READYZ_TIMEOUT_S
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    body = {
        name: results.get(name, f"timeout (no answer within {settings.READYZ_TIMEOUT_S} s)")
        for name in CHECKS
    }
    ready = all(answer in {OK, NOT_USED} for answer in body.values())
    return {"status": "ok" if ready else "error", **body}
