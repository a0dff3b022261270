"""When Redis fails: the cache (throttle counters) and the broker (job messages), each a real
redis-server of the test's own that is stopped (connections refused) or frozen (SIGSTOP: the
port accepts, nothing answers).

Before the fix a stopped cache made every API call a 500 (the throttles read it), a frozen one
blocked each call on redis-py's default of no timeout, and a job submitted while the broker was
down answered 500 with its row committed, dispatched only 15 minutes later by the reaper.
"""

import time
from collections.abc import Iterator

import httpx
import pytest
import redis

from accounts import throttling
from jobs.models import Job, JobStatus
from jobs.services import job_submit
from jobs.tasks import job_dispatch, jobs_reap
from tests.helpers import (
    DLRM,
    RedisServer,
    Worker,
    cache_settings,
    celery_broker,
    database_url,
    distinct_copy,
    free_port,
    needs_redis_server,
    running_gunicorn,
    running_redis,
    services_are_real,
    token_client,
)

pytestmark = needs_redis_server

# A request may pay one cache timeout (0.25 s connect, 0.5 s read) before the throttles stop
# trying the cache for CACHE_RETRY_AFTER_S; well under the brief's 1-2 s either way.
FAST_S = 1.5
SIZING = {"model": "llama-3.1-8b", "task": "inference", "context_tokens": 4096}


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    with running_redis() as server:
        yield server


@pytest.fixture
def cache_on_own_redis(redis_server, settings) -> Iterator[RedisServer]:
    settings.CACHES = cache_settings(redis_server.url(0), settings)
    throttling._SharedCacheState.down_until_s = 0.0
    throttling._counts_in_process.clear()
    yield redis_server
    throttling._SharedCacheState.down_until_s = 0.0
    throttling._counts_in_process.clear()


def counted_in_redis(server: RedisServer) -> int:
    """Requests the anonymous window holds for this address in that Redis."""
    client = redis.Redis.from_url(server.url(0))
    return client.zcard("throttle-window:throttle_anon_127.0.0.1")


def timed(call, *args, **kwargs):
    started = time.monotonic()
    response = call(*args, **kwargs)
    return response, time.monotonic() - started


def requests_a_visitor_and_a_script_make(client, team) -> list[tuple[str, object]]:
    api = token_client(team.member_raw_token)
    return [
        ("GET /api/v1/gpus/ (anonymous)", lambda: client.get("/api/v1/gpus/")),
        ("GET /api/v1/gpus/ (token)", lambda: api.get("/api/v1/gpus/")),
        (
            "POST /api/v1/advice/sizing (token)",
            lambda: api.post("/api/v1/advice/sizing", SIZING, format="json"),
        ),
        ("GET /", lambda: client.get("/")),
        ("GET /size/", lambda: client.get("/size/")),
        ("GET /account/login/", lambda: client.get("/account/login/")),
        (
            "POST /account/login/ (wrong password)",
            lambda: client.post("/account/login/", {"username": "nobody", "password": "x"}),
        ),
    ]


def warm_up(client, team) -> None:
    """Each request once with the cache answering: a serving process has imported and cached
    what the first sizing loads, so the timed rounds measure the cache's cost alone."""
    for name, call in requests_a_visitor_and_a_script_make(client, team):
        assert call().status_code < 500, name


def assert_all_answer_fast_without_500(client, team) -> None:
    for _round in range(3):  # the first pays the timeout, the next ones skip the cache
        for name, call in requests_a_visitor_and_a_script_make(client, team):
            response, elapsed_s = timed(call)
            assert response.status_code < 500, (name, response.status_code)
            assert elapsed_s < FAST_S, (name, round(elapsed_s, 2))


@pytest.mark.django_db
def test_with_the_cache_stopped_pages_and_the_api_answer_without_500(
    cache_on_own_redis, client, team, catalog
):
    assert client.get("/api/v1/gpus/").status_code == 200  # the cache works: counters in Redis
    assert counted_in_redis(cache_on_own_redis) == 1
    warm_up(client, team)
    cache_on_own_redis.stop()
    assert_all_answer_fast_without_500(client, team)


@pytest.mark.django_db
def test_with_the_cache_frozen_pages_and_the_api_answer_within_the_timeout(
    cache_on_own_redis, client, team, catalog
):
    warm_up(client, team)
    cache_on_own_redis.freeze()
    try:
        assert_all_answer_fast_without_500(client, team)
    finally:
        cache_on_own_redis.thaw()


@pytest.mark.django_db
def test_with_the_cache_down_the_throttles_still_limit_in_each_process(
    cache_on_own_redis, client, settings
):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "anon": "3/min",
        },
    }
    cache_on_own_redis.stop()
    statuses = [client.get("/api/v1/gpus/").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]


@pytest.mark.django_db
def test_the_throttles_go_back_to_the_shared_cache_once_it_answers_again(
    cache_on_own_redis, client, settings
):
    settings.CACHE_RETRY_AFTER_S = 0.2
    cache_on_own_redis.stop()
    assert client.get("/api/v1/gpus/").status_code == 200  # counted in this process
    cache_on_own_redis.start()  # the same port, empty
    time.sleep(0.3)
    assert client.get("/api/v1/gpus/").status_code == 200
    assert counted_in_redis(cache_on_own_redis) == 1


# The broker -----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_dispatch_the_broker_refuses_leaves_the_job_queued_and_is_not_raised(
    team, media_root, settings
):
    job = job_submit(
        team=team.team, user=team.member, kind="trace", uploads=[distinct_copy(DLRM[0], 1)]
    )
    with celery_broker(f"redis://127.0.0.1:{free_port()}/0", settings):
        started = time.monotonic()
        assert job_dispatch(job_id=job.pk) is False
        assert time.monotonic() - started < FAST_S
    job.refresh_from_db()
    assert (job.status, job.dispatched_at) == (JobStatus.QUEUED, None)


@pytest.mark.django_db
def test_an_upload_page_post_while_the_broker_refuses_redirects_to_the_queued_job(
    client, team, media_root, settings, django_capture_on_commit_callbacks
):
    """Before: the after-commit publish raised, and the page answered 500 with the job made."""
    client.force_login(team.member)
    dead_broker = f"redis://127.0.0.1:{free_port()}/0"
    with celery_broker(dead_broker, settings), django_capture_on_commit_callbacks(execute=True):
        response, elapsed_s = timed(
            client.post, "/jobs/new/", {"files": [distinct_copy(DLRM[0], 2)]}
        )
    assert response.status_code == 302 and elapsed_s < FAST_S
    job = Job.objects.get(team=team.team)
    assert (job.status, job.dispatched_at) == (JobStatus.QUEUED, None)
    assert response["Location"] == job.get_absolute_url()
    assert client.get(response["Location"]).status_code == 200


@pytest.mark.django_db
def test_an_api_upload_while_the_broker_is_frozen_is_accepted_within_its_socket_timeout(
    redis_server, team, media_root, settings, django_capture_on_commit_callbacks
):
    """A hung broker costs the upload one broker socket timeout (2 s), not a hang."""
    api = token_client(team.member_raw_token)
    with celery_broker(redis_server.url(0), settings):
        redis_server.freeze()
        try:
            with django_capture_on_commit_callbacks(execute=True):
                response, elapsed_s = timed(
                    api.post,
                    "/api/v1/jobs/",
                    {"kind": "trace", "files": [distinct_copy(DLRM[0], 3)]},
                    format="multipart",
                )
        finally:
            redis_server.thaw()
    assert response.status_code == 201 and response.json()["status"] == "queued"
    assert elapsed_s < 4, elapsed_s
    assert Job.objects.get(team=team.team).dispatched_at is None


@pytest.mark.django_db(transaction=True)
def test_nine_uploads_to_gunicorn_while_the_broker_is_frozen_each_wait_one_timeout_at_most(
    redis_server, team, media_root, tmp_path, settings
):
    """Before: the publish retry policy (two retries) multiplied the socket timeout, and 2 of 9
    uploads (each worker's first) took 8-9 s against a 2 s promise. The worst case the README
    states is one connect timeout plus one socket timeout."""
    if not services_are_real():
        pytest.skip("gunicorn's workers share the test database on PostgreSQL")
    options = settings.CELERY_BROKER_TRANSPORT_OPTIONS
    worst_s = options["socket_connect_timeout"] + options["socket_timeout"]
    elapsed = []
    try:
        with (
            running_gunicorn(
                tmp_path,
                workers=2,
                DATABASE_URL=database_url(),
                CELERY_BROKER_URL=redis_server.url(0),
                MEDIA_ROOT=str(media_root),
            ) as server,
            httpx.Client(
                base_url=server.url,
                timeout=30,
                headers={"Authorization": f"Token {team.member_raw_token}"},
            ) as client,
        ):

            def upload(index: int) -> float:
                trace = distinct_copy(DLRM[0], index)
                started = time.monotonic()
                response = client.post(
                    "/api/v1/jobs/",
                    data={"kind": "trace"},
                    files={"files": (trace.name, trace.read())},
                )
                assert response.status_code == 201, response.text
                assert response.json()["status"] == "queued"
                return time.monotonic() - started

            # Each worker holds a broker connection when the broker freezes, as in service.
            for index in range(6):
                upload(index)
            redis_server.freeze()
            elapsed = [upload(20 + index) for index in range(9)]
    finally:
        redis_server.thaw()
    assert max(elapsed) < worst_s + 0.5, [round(s, 2) for s in elapsed]


@pytest.mark.django_db
def test_a_restarted_broker_takes_the_next_job_without_a_publish_retry(
    redis_server, team, media_root, settings
):
    """Publishes are not retried (a retry multiplied the wait on a frozen broker); a pooled
    connection the restart closed must still not cost the next upload its dispatch."""

    def submitted(index: int) -> int:
        return job_submit(
            team=team.team,
            user=team.member,
            kind="trace",
            uploads=[distinct_copy(DLRM[0], 40 + index)],
        ).pk

    with celery_broker(redis_server.url(0), settings):
        assert job_dispatch(job_id=submitted(0))
        redis_server.stop()
        redis_server.start()  # the same port, every connection to it closed
        started = time.monotonic()
        assert job_dispatch(job_id=submitted(1)) is True
        assert time.monotonic() - started < FAST_S


def jobs_of(team) -> list[Job]:
    return list(Job.objects.filter(team=team.team).order_by("pk"))


@pytest.mark.django_db(transaction=True)
def test_jobs_submitted_while_the_broker_is_down_are_accepted_and_each_finishes_exactly_once(
    redis_server, team, media_root, settings, worker_env
):
    """The broker dies under a running worker; uploads keep being accepted (201, queued, no
    500), a retry with the same Idempotency-Key makes no second job, and once the broker is
    back the reaper dispatches them and the worker finishes each exactly once."""
    if not services_are_real():
        pytest.skip("a real worker needs PostgreSQL")
    settings.JOB_HEARTBEAT_TIMEOUT_S = 3
    api = token_client(team.member_raw_token)
    with celery_broker(redis_server.url(0), settings):
        worker = Worker(media_root, CELERY_BROKER_URL=redis_server.url(0), **worker_env)
        from config.celery import app as celery_app

        previous_queue = celery_app.conf.task_default_queue
        celery_app.conf.task_default_queue = worker.queue
        worker.start()
        try:
            redis_server.stop()
            responses = []
            for index in range(3):
                response, elapsed_s = timed(
                    api.post,
                    "/api/v1/jobs/",
                    {"kind": "trace", "files": [distinct_copy(DLRM[index], 300 + index)]},
                    format="multipart",
                    HTTP_IDEMPOTENCY_KEY=f"upload-{index}",
                )
                assert response.status_code == 201, response.content
                assert response.json()["status"] == "queued"
                assert elapsed_s < 3, elapsed_s
                responses.append(response.json())
            # The client did not trust its first answer and sends the same upload again.
            retry = api.post(
                "/api/v1/jobs/",
                {"kind": "trace", "files": [distinct_copy(DLRM[0], 300)]},
                format="multipart",
                HTTP_IDEMPOTENCY_KEY="upload-0",
            )
            assert retry.status_code == 200 and retry.json()["id"] == responses[0]["id"]
            assert len(jobs_of(team)) == 3
            assert all(job.dispatched_at is None for job in jobs_of(team))

            redis_server.start()  # the same port, empty: nothing was queued while it was down
            settings.JOB_DISPATCH_GRACE_S = 0
            assert jobs_reap() == {"requeued": 0, "dispatched": 3, "resent": 0}
            assert all(job.dispatched_at is not None for job in jobs_of(team))
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and not all(j.finished for j in jobs_of(team)):
                time.sleep(0.3)
            finished = jobs_of(team)
            assert [job.status for job in finished] == [JobStatus.DONE] * 3, [
                (job.status, job.error) for job in finished
            ]
            assert [job.attempts for job in finished] == [1, 1, 1]
            assert jobs_reap() == {"requeued": 0, "dispatched": 0, "resent": 0}
        finally:
            worker.stop()
            celery_app.conf.task_default_queue = previous_queue
