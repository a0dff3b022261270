"""POST /api/v1/jobs/ with an Idempotency-Key: a client that retries (its first answer was lost,
or was a 5xx) gets the job its first request made, never a second one.

Before: every retry made another job (and another analysis) of the same files.
"""

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from jobs.models import Job
from jobs.services import IdempotencyKeyReused, job_submit_idempotent
from tests.helpers import DLRM, SMALL_TRACE, make_team, token_client, upload

URL = "/api/v1/jobs/"


@pytest.fixture
def api(team, media_root):
    return token_client(team.member_raw_token)


def post(client, path=SMALL_TRACE, key: str | None = "upload-1", kind: str = "trace"):
    headers = {} if key is None else {"HTTP_IDEMPOTENCY_KEY": key}
    return client.post(URL, {"kind": kind, "files": [upload(path)]}, format="multipart", **headers)


def test_a_retry_with_the_same_key_and_files_returns_the_first_job_with_200(api, team):
    first = post(api)
    assert first.status_code == 201, first.content
    again = post(api)
    assert again.status_code == 200 and again["Idempotent-Replayed"] == "true"
    assert again.json()["id"] == first.json()["id"]
    assert Job.objects.filter(team=team.team).count() == 1


def test_the_same_key_with_other_files_is_a_409_and_makes_no_job(api, team):
    assert post(api).status_code == 201
    other = post(api, path=DLRM[0])
    assert other.status_code == 409 and "Idempotency-Key" in other.json()["detail"]
    assert Job.objects.filter(team=team.team).count() == 1


def test_the_same_key_for_another_kind_is_a_409(api, team, media_root):
    assert post(api).status_code == 201
    with pytest.raises(IdempotencyKeyReused):
        job_submit_idempotent(
            team=team.team,
            user=team.member,
            kind="codescan",
            uploads=[upload(SMALL_TRACE)],
            idempotency_key="upload-1",
        )


def test_keys_are_per_team(api, team, media_root):
    other = make_team("Bravo")
    mine = post(api)
    theirs = post(token_client(other.member_raw_token))
    assert (mine.status_code, theirs.status_code) == (201, 201)
    assert mine.json()["id"] != theirs.json()["id"]


def test_a_key_older_than_its_lifetime_makes_a_new_job(api, team, settings):
    first = post(api)
    Job.objects.filter(public_id=first.json()["id"]).update(
        created_at=timezone.now() - timedelta(seconds=settings.JOB_IDEMPOTENCY_KEY_TTL_S + 1)
    )
    again = post(api)
    assert again.status_code == 201 and again.json()["id"] != first.json()["id"]
    assert Job.objects.get(public_id=first.json()["id"]).idempotency_key == ""


def test_without_a_key_each_upload_is_its_own_job(api, team):
    assert post(api, key=None).status_code == 201
    assert post(api, key=None).status_code == 201
    assert Job.objects.filter(team=team.team).count() == 2


@pytest.mark.parametrize("key", ["", "x" * 256, "with space", "caf\u00e9"], ids=repr)
def test_a_malformed_key_is_a_400_and_makes_no_job(api, team, key):
    response = post(api, key=key)
    assert response.status_code == 400 and "Idempotency-Key" in response.json()
    assert not Job.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_with_one_key_make_one_job(team, media_root):
    """Both pass the lookup before either commits: the unique constraint decides, and the
    loser answers with the winner's job."""
    barrier = threading.Barrier(4)
    outcomes = []

    def submit() -> None:
        try:
            barrier.wait()
            outcomes.append(
                job_submit_idempotent(
                    team=team.team,
                    user=team.member,
                    kind="trace",
                    uploads=[upload(SMALL_TRACE)],
                    idempotency_key="raced",
                )
            )
        finally:
            connection.close()

    threads = [threading.Thread(target=submit) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(outcomes) == 4
    assert len({outcome.job.pk for outcome in outcomes}) == 1
    assert sorted(outcome.created for outcome in outcomes) == [False, False, False, True]
    assert Job.objects.filter(team=team.team).count() == 1
