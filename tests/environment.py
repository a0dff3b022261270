"""Loaded as a pytest plugin (see pyproject.toml) before Django reads its settings.

Tests talk plain http to the test client and live server, and need a key; the environment
still wins where it sets these (CI sets the database and broker URLs).
"""

import os
import re

os.environ.setdefault("SECRET_KEY", "tests-only-not-a-secret-" + "x" * 40)
os.environ.setdefault("HTTPS", "0")
# Suites make many requests a minute; the throttling tests set their own low rates.
for scope in ("ANON", "USER", "TEAM", "TOKEN_CREATE"):
    os.environ.setdefault(f"THROTTLE_{scope}", "100000/min")
# Tasks the tests enqueue go to a queue of this test run only (removed at the end), never to
# the queue a developer's own worker listens on.
os.environ.setdefault("CELERY_QUEUE", f"tests-{os.getpid()}")

# Under pytest-xdist (`make test` runs a worker per core) each worker process is a test run of
# its own. It inherits the controller's environment, so it takes its own task queue here, and
# its own Redis cache database: a test's cache.clear() flushes the whole database, which
# another worker's throttling test may be counting in. Redis has databases 0-15 by default;
# workers take 8 upwards, so up to eight workers.
XDIST_FIRST_CACHE_DB = 8
REDIS_DATABASES = 16
xdist_worker = os.environ.get("PYTEST_XDIST_WORKER")  # "gw0", "gw1", ...
if xdist_worker:
    os.environ["CELERY_QUEUE"] = f"tests-{os.getpid()}"
    cache_url = os.environ.get("CACHE_URL", "")
    if cache_url.startswith("redis"):
        cache_db = XDIST_FIRST_CACHE_DB + int(xdist_worker.removeprefix("gw"))
        if cache_db >= REDIS_DATABASES:
            raise RuntimeError(f"{xdist_worker}: run at most eight test workers (-n 8)")
        server = re.sub(r"(rediss?://[^/]*)(/\d*)?$", r"\1", cache_url)
        os.environ["CACHE_URL"] = f"{server}/{cache_db}"
