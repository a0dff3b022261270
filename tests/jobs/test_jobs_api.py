"""The jobs API and pages: submission, validation, size limits, reuse, team privacy."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from jobs.models import Job, JobStatus
from jobs.services import job_submit
from tests.helpers import SMALL_TRACE, make_team, session_client, token_client, upload

URL = "/api/v1/jobs/"


@pytest.fixture
def api(team, media_root):
    return token_client(team.member_raw_token)


def test_a_trace_upload_creates_a_queued_job_of_the_callers_team(api, team):
    response = api.post(URL, {"kind": "trace", "files": [upload(SMALL_TRACE)]}, format="multipart")
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["status"], body["team"], body["created_by"]) == (
        "queued",
        "alpha",
        team.member.username,
    )
    assert body["files"][0]["name"] == SMALL_TRACE.name
    assert body["files"][0]["size_bytes"] == SMALL_TRACE.stat().st_size
    job = Job.objects.get(public_id=body["id"])
    assert job.files.get().file.read() == SMALL_TRACE.read_bytes()


def test_uploading_identical_files_again_reuses_the_report(team, media_root):
    first = job_submit(
        team=team.team, user=team.member, kind="trace", uploads=[upload(SMALL_TRACE)]
    )
    Job.objects.filter(pk=first.pk).update(status=JobStatus.DONE, report={"ranks": []})
    again = job_submit(
        team=team.team,
        user=team.member,
        kind="trace",
        uploads=[upload(SMALL_TRACE, "renamed.json.gz")],
    )
    assert (again.status, again.reused_from_id, again.report) == ("done", first.pk, {"ranks": []})


def test_identical_files_from_another_team_are_analysed_afresh(team, media_root):
    other = make_team("Bravo")
    first = job_submit(
        team=team.team, user=team.member, kind="trace", uploads=[upload(SMALL_TRACE)]
    )
    Job.objects.filter(pk=first.pk).update(status=JobStatus.DONE, report={"ranks": []})
    theirs = job_submit(
        team=other.team, user=other.member, kind="trace", uploads=[upload(SMALL_TRACE)]
    )
    assert theirs.status == "queued" and theirs.reused_from is None


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"kind": "trace"}, "files"),
        ({"kind": "video", "files": "x"}, "kind"),
        ({"kind": "trace", "files": "x"}, "files"),
    ],
)
def test_bad_submissions_are_400_naming_the_field(api, payload, field):
    if payload.get("files") == "x":
        payload["files"] = [SimpleUploadedFile("empty.json", b"")]
    response = api.post(URL, payload, format="multipart")
    assert response.status_code == 400
    assert field in response.json()


def test_an_oversized_upload_is_refused_with_413_before_it_is_read(api, settings):
    settings.JOB_UPLOAD_MAX_BYTES = 1024
    response = api.post(
        URL,
        {"kind": "trace", "files": [SimpleUploadedFile("big.json", b"x" * 4096)]},
        format="multipart",
    )
    assert response.status_code == 413
    assert "limit is 1,024 bytes" in response.json()["detail"]
    assert not Job.objects.exists()


def test_the_team_lists_its_jobs_and_reads_one_with_its_report(api, team, media_root):
    job = job_submit(team=team.team, user=team.member, kind="trace", uploads=[upload(SMALL_TRACE)])
    Job.objects.filter(pk=job.pk).update(status=JobStatus.DONE, report={"ranks": [{"rank": 0}]})
    listed = api.get(URL).json()["results"]
    assert [row["id"] for row in listed] == [str(job.public_id)]
    assert "report" not in listed[0]
    detail = api.get(f"{URL}{job.public_id}/").json()
    assert detail["report"] == {"ranks": [{"rank": 0}]}


def test_a_session_user_uploads_through_the_page_and_lands_on_the_job(client, team, media_root):
    client.force_login(team.member)
    response = client.post("/jobs/new/", {"files": [upload(SMALL_TRACE)]})
    job = Job.objects.get()
    assert response.status_code == 302 and response["Location"] == job.get_absolute_url()
    page = client.get(job.get_absolute_url()).content.decode()
    assert 'hx-trigger="every 1s"' in page and SMALL_TRACE.name in page


def test_the_upload_page_refuses_an_empty_form(client, team, media_root):
    client.force_login(team.member)
    response = client.post("/jobs/new/", {})
    assert response.status_code == 400
    assert "This field is required" in response.content.decode()


def test_the_progress_fragment_asks_for_a_full_reload_once_finished(client, team, media_root):
    client.force_login(team.member)
    job = job_submit(team=team.team, user=team.member, kind="trace", uploads=[upload(SMALL_TRACE)])
    url = f"{job.get_absolute_url()}?fragment=progress"
    running = client.get(url, HTTP_HX_REQUEST="true")
    assert "<progress" in running.content.decode()
    Job.objects.filter(pk=job.pk).update(status=JobStatus.FAILED, error="bad")
    done = client.get(url, HTTP_HX_REQUEST="true")
    assert done.status_code == 204 and done["HX-Refresh"] == "true"


def test_another_teams_job_page_is_404(client, team, media_root):
    other = make_team("Bravo")
    job = job_submit(
        team=other.team, user=other.member, kind="trace", uploads=[upload(SMALL_TRACE)]
    )
    client.force_login(team.member)
    assert client.get(job.get_absolute_url()).status_code == 404
    assert session_client(team.member).get(f"{URL}{job.public_id}/").status_code == 404


def test_an_unknown_kind_is_a_400_that_lists_the_kinds(api):
    response = api.post(
        URL, {"kind": "profile", "files": [upload(SMALL_TRACE)]}, format="multipart"
    )
    assert response.status_code == 400
    (message,) = response.json()["kind"]
    assert (
        message
        == '"profile" is not a kind of job: choose trace (profiling trace) or codescan (code scan).'
    )
    assert not Job.objects.exists()


def test_signed_out_the_nav_offers_jobs_through_sign_in_which_returns_there(client, db):
    page = client.get("/size/").content.decode()
    assert 'href="/account/login/?next=/jobs/"' in page
    assert 'href="/account/login/?next=/size/"' in page
