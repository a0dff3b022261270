"""Loaded as a pytest plugin (see pyproject.toml) before Django reads its settings.

Tests talk plain http to the test client and live server, and need a key; the environment
still wins where it sets these (CI sets the database and broker URLs).
"""

import os

os.environ.setdefault("SECRET_KEY", "tests-only-not-a-secret-" + "x" * 40)
os.environ.setdefault("HTTPS", "0")
# Suites make many requests a minute; the throttling tests set their own low rates.
for scope in ("ANON", "USER", "TEAM", "TOKEN_CREATE"):
    os.environ.setdefault(f"THROTTLE_{scope}", "100000/min")
# Tasks the tests enqueue go to a queue of this test run only (removed at the end), never to
# the queue a developer's own worker listens on.
os.environ.setdefault("CELERY_QUEUE", f"tests-{os.getpid()}")
