import pytest
from django.conf import settings
from django.core.cache import cache

from catalog.services import CatalogLoadReport, catalog_load_bundled


@pytest.fixture(autouse=True)
def empty_cache():
    """Throttle counters live in the cache (Redis in CI): each test starts from zero."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Production hashes passwords slowly on purpose; tests create many users."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def catalog(db) -> CatalogLoadReport:
    """The real bundled catalogue (30 GPUs, ~1,000 offers), loaded as `make run` loads it."""
    return catalog_load_bundled()


@pytest.fixture(scope="session", autouse=True)
def remove_this_runs_task_queue():
    """Tasks enqueued by tests (CELERY_QUEUE is per test run) are dropped at the end."""
    yield
    if settings.CELERY_BROKER_URL:
        from config.celery import app

        with app.connection_for_write() as connection:
            connection.default_channel.queue_delete(settings.CELERY_TASK_DEFAULT_QUEUE)
