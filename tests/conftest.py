from pathlib import Path

import pytest
from django.conf import settings
from django.core.cache import cache
from django.db import transaction

from advisor.hub_guard import hub_state_reset
from catalog.services import CatalogLoadReport
from config.celery import app as celery_app
from tests.bundled_catalog import bundled_catalog_load
from tests.helpers import Worker, services_are_real


def _transactional(item: pytest.Item) -> bool:
    marker = item.get_closest_marker("django_db")
    requested = set(getattr(item, "fixturenames", ()))
    return bool(
        (marker and marker.kwargs.get("transaction"))
        or requested & {"transactional_db", "live_server"}
    )


# pytest-xdist's `load` mode hands each worker its tests in collection order, so every worker
# still runs its transactional tests (below) after its plain ones; the modes that group tests by
# file or steal them from another worker do not, and a plain test after a flush finds no beat
# schedules (tried: `--dist worksteal` failed two such tests).
ORDER_KEEPING_DISTRIBUTIONS = frozenset({"no", "load"})


def pytest_configure(config: pytest.Config) -> None:
    distribution = getattr(config.option, "dist", "no")
    if distribution not in ORDER_KEEPING_DISTRIBUTIONS:
        raise pytest.UsageError(
            f"--dist {distribution} may run plain tests after transactional ones: use --dist load"
        )


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A transactional test (a real worker, the live server of the browser tests) ends by
    flushing the database, which takes the rows the migrations wrote (beat schedules) from
    every plain database test after it. pytest-django runs transactional tests last, but
    pytest's own grouping by parametrized fixtures moves some forward again: they go last
    here, after all reordering, and each starts from the migrated state (serialized
    rollback restores it at its start)."""
    for item in items:
        if _transactional(item):
            item.add_marker(
                pytest.mark.django_db(transaction=True, serialized_rollback=True), append=False
            )
    items.sort(key=_transactional)


@pytest.fixture(autouse=True)
def empty_cache():
    """Throttle counters live in the cache (Redis in CI): each test starts from zero."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def no_hugging_face_hub(settings, tmp_path_factory):
    """No test reaches the real Hub: a Hub id finds nothing listening on loopback port 9,
    unless a test serves recorded files itself (tests/advisor/hub_server.py)."""
    settings.HF_ENDPOINT = "http://127.0.0.1:9"
    settings.HF_TOKEN = None
    settings.HF_HUB_CACHE_DIR = tmp_path_factory.getbasetemp() / "hf"
    hub_state_reset()
    yield
    hub_state_reset()


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Production hashes passwords slowly on purpose; tests create many users."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def catalog(db) -> CatalogLoadReport:
    """The real bundled catalogue (82 GPUs, ~10,700 offers), as `make run` loads it: loaded
    once per run, then copied back for each test (tests/bundled_catalog.py)."""
    return bundled_catalog_load()


@pytest.fixture(scope="module")
def bundled_catalog(django_db_setup, django_db_blocker):
    """Load the bundled catalogue once for a module, inside a transaction rolled back after.

    Each test's own `db` transaction nests inside it as a savepoint, so a test's writes are
    still undone before the next test.
    """
    with django_db_blocker.unblock():
        outer = transaction.atomic()
        outer.__enter__()
        bundled_catalog_load()
    yield
    with django_db_blocker.unblock():
        transaction.set_rollback(True)
        outer.__exit__(None, None, None)


@pytest.fixture(scope="session", autouse=True)
def remove_this_runs_task_queue():
    """Tasks enqueued by tests (CELERY_QUEUE is per test run) are dropped at the end."""
    yield
    if settings.CELERY_BROKER_URL:
        with celery_app.connection_for_write() as connection:
            connection.default_channel.queue_delete(settings.CELERY_TASK_DEFAULT_QUEUE)


@pytest.fixture
def media_root(tmp_path, settings) -> Path:
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MEDIA_ROOT.mkdir()
    return settings.MEDIA_ROOT


@pytest.fixture
def worker_env() -> dict[str, str]:
    return {
        "JOB_HEARTBEAT_TIMEOUT_S": "3",
        "JOB_SOFT_TIME_LIMIT_S": "50",
        "JOB_HARD_TIME_LIMIT_S": "60",
        "CELERY_VISIBILITY_TIMEOUT_S": "8",
        "JOB_MAX_DECOMPRESSED_BYTES": str(256 * 1024 * 1024),
    }


@pytest.fixture
def worker(transactional_db, media_root, settings, worker_env):
    """A real Celery worker on a queue of its own (jobs and browser tests use it)."""
    if not services_are_real():
        pytest.skip("a real worker needs PostgreSQL and Redis")
    settings.JOB_HEARTBEAT_TIMEOUT_S = 3
    process = Worker(media_root, **worker_env)
    previous = celery_app.conf.task_default_queue
    celery_app.conf.task_default_queue = process.queue
    process.start()
    yield process
    process.stop()
    celery_app.conf.task_default_queue = previous
    with celery_app.connection_for_write() as connection:
        connection.default_channel.queue_delete(process.queue)
