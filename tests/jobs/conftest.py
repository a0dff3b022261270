import gzip
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile

from config.celery import app as celery_app
from tests.accounts.conftest import make_team
from tests.jobs.worker import Worker

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
DLRM = sorted((TRACES / "param/et_replay/tests/inputs/dlrm_kineto_8rank").glob("*.json.gz"))
SMALL_TRACE = TRACES / "hta/tests/data/triton_example/triton_example.json.gz"
LARGEST_TRACE = TRACES / "hta/tests/data/df_index_resolver/df_index_resolver.json.gz"


def services_are_real() -> bool:
    return settings.DATABASES["default"]["ENGINE"].endswith("postgresql") and bool(
        settings.CELERY_BROKER_URL
    )


needs_real_services = pytest.mark.skipif(
    not services_are_real(),
    reason="a real worker needs PostgreSQL and Redis (make test uses them when they answer)",
)


@pytest.fixture
def media_root(tmp_path, settings) -> Path:
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MEDIA_ROOT.mkdir()
    return settings.MEDIA_ROOT


@pytest.fixture
def team(db):
    return make_team("Alpha")


def upload(path: Path, name: str | None = None) -> SimpleUploadedFile:
    return SimpleUploadedFile(name or path.name, path.read_bytes())


def distinct_copy(path: Path, index: int) -> SimpleUploadedFile:
    """The same trace, gzipped with another mtime: different bytes, so no report reuse."""
    data = gzip.decompress(path.read_bytes())
    return SimpleUploadedFile(
        f"{index}-{path.name}", gzip.compress(data, mtime=1_700_000_000 + index)
    )


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
