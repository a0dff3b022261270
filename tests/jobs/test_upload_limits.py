"""Upload limits and refusals in the caller's language: JSON on the API (DRF's
`{"detail": ...}`), HTML on the pages; never a 500, never Django's bare error page on the API.

Before the fix: a signed-in user with no team got a 500 from /jobs/new/ (DRF's PermissionDenied
raised, Django's caught); over 100 files (DATA_UPLOAD_MAX_NUMBER_FILES) and bodies over
DATA_UPLOAD_MAX_MEMORY_SIZE were Django's HTML 400 page on the API; an oversized upload to the
page was answered in JSON.
"""

import json

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils.datastructures import MultiValueDict

from jobs import forms as job_forms
from jobs import limits
from jobs.api import serializers as job_serializers
from jobs.middleware import UPLOAD_VIEWS
from jobs.models import Job
from tests.helpers import SMALL_TRACE, session_client, token_client, upload

API = "/api/v1/jobs/"
TOO_MANY = "At most 64 files per job."


def files(count: int) -> list[SimpleUploadedFile]:
    return [SimpleUploadedFile(f"{i}.json", b'{"traceEvents": []}') for i in range(count)]


@pytest.fixture
def loner(db):
    """Signed in, in no team."""
    return get_user_model().objects.create_user("loner", password="x" * 20)


def assert_html(response) -> str:
    assert response["Content-Type"].startswith("text/html"), response["Content-Type"]
    return response.content.decode()


# No team -----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/jobs/new/", "/jobs/new/code/"])
def test_a_user_without_a_team_gets_a_403_page_saying_whom_to_ask(loner, media_root, path):
    client = Client(raise_request_exception=False)
    client.force_login(loner)
    posted = client.post(path, {"files": [upload(SMALL_TRACE)]})
    assert posted.status_code == 403
    page = assert_html(posted)
    assert "Ask a team admin to add you." in page
    assert '<main class="container">' in page and "GPU Advisor" in page  # base.html
    assert not Job.objects.exists()
    assert client.get(path).status_code == 403


def test_the_api_answers_a_user_without_a_team_with_a_403_json(loner, media_root):
    response = session_client(loner).post(
        API, {"kind": "trace", "files": [upload(SMALL_TRACE)]}, format="multipart"
    )
    assert response.status_code == 403
    assert "Ask a team admin to add you." in response.json()["detail"]


# Number of files ---------------------------------------------------------------------------


def _tiny(count: int) -> list[SimpleUploadedFile]:
    return [SimpleUploadedFile(f"rank{i}.json", b"{}") for i in range(count)]


@pytest.mark.parametrize("count", [limits.MAX_FILES + 1, 100])
def test_the_form_and_the_serializer_refuse_too_many_files_alike(count):
    """The limits are checked once (jobs/limits.py): the page and the API say the same."""
    form = job_forms.TraceUploadForm(data={}, files=MultiValueDict({"files": _tiny(count)}))
    serializer = job_serializers.JobSubmitSerializer(
        data=MultiValueDict({"kind": ["trace"], "files": _tiny(count)})
    )
    assert not form.is_valid() and not serializer.is_valid()
    assert form.errors["files"] == [limits.TOO_MANY_FILES]
    assert [str(e) for e in serializer.errors["files"]] == [limits.TOO_MANY_FILES]


def test_the_form_and_the_serializer_refuse_too_many_bytes_alike(settings):
    settings.JOB_UPLOAD_MAX_BYTES = 3
    form = job_forms.TraceUploadForm(data={}, files=MultiValueDict({"files": _tiny(2)}))
    serializer = job_serializers.JobSubmitSerializer(
        data=MultiValueDict({"kind": ["trace"], "files": _tiny(2)})
    )
    assert not form.is_valid() and not serializer.is_valid()
    expected = limits.too_large_message(4)
    assert form.errors["files"] == [expected]
    assert [str(e) for e in serializer.errors["files"]] == [expected]


@pytest.mark.parametrize("count", [65, 101, 500])
def test_too_many_files_on_the_api_is_a_json_400(team, media_root, count):
    """101 and 500 failed before the fix: Django's TooManyFilesSent, an HTML 400 page."""
    api = token_client(team.member_raw_token)
    response = api.post(API, {"kind": "trace", "files": files(count)}, format="multipart")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    body = response.json()
    # Up to Django's DATA_UPLOAD_MAX_NUMBER_FILES (100) the serializer refuses the field;
    # beyond it Django stops reading and the middleware answers.
    assert (body["files"][0] if count <= 100 else body["detail"]) == TOO_MANY
    assert not Job.objects.exists()


@pytest.mark.parametrize("count", [65, 101])
def test_too_many_files_on_the_page_is_an_html_400(team, media_root, count):
    client = Client(raise_request_exception=False)
    client.force_login(team.member)
    response = client.post("/jobs/new/", {"files": files(count)})
    assert response.status_code == 400
    page = assert_html(response)
    if count == 65:
        assert TOO_MANY in page
    assert not Job.objects.exists()


# Body size ---------------------------------------------------------------------------------


def test_an_oversized_upload_to_the_page_is_an_html_413(team, media_root, settings):
    settings.JOB_UPLOAD_MAX_BYTES = 1024
    client = Client()
    client.force_login(team.member)
    response = client.post("/jobs/new/", {"files": [SimpleUploadedFile("big.json", b"x" * 4096)]})
    assert response.status_code == 413
    assert "the limit is 1,024 bytes" in assert_html(response)
    assert not Job.objects.exists()


@pytest.mark.parametrize("path", ["/api/v1/advice/sizing", "/api/v1/advice/portability"])
def test_a_json_body_over_the_memory_limit_is_a_json_413(catalog, path):
    """Failed before the fix: RequestDataTooBig, Django's HTML 400 page."""
    body = json.dumps({"model": "gpt2", "padding": "x" * 3_000_000})
    response = Client().post(path, body, content_type="application/json")
    assert response.status_code == 413
    assert response["Content-Type"] == "application/json"
    assert "2,621,440-byte limit" in response.json()["detail"]


def test_a_json_body_over_the_memory_limit_is_a_json_413_for_a_signed_in_caller(team):
    body = json.dumps({"name": "x" * 3_000_000})
    response = token_client(team.admin_raw_token).post(
        "/api/v1/tokens/", body, content_type="application/json"
    )
    assert response.status_code == 413
    assert "limit" in response.json()["detail"]


def test_too_many_form_fields_on_the_api_is_a_json_400(catalog):
    body = "&".join(f"f{i}=1" for i in range(1_500))
    response = Client().post(
        "/api/v1/advice/sizing", body, content_type="application/x-www-form-urlencoded"
    )
    assert response.status_code == 400
    assert "More than 1,000 fields" in response.json()["detail"]


def test_a_page_over_the_memory_limit_still_answers_html(catalog):
    response = Client(raise_request_exception=False).post(
        "/size/", {"source": "config", "config": "x" * 3_000_000}
    )
    assert 400 <= response.status_code < 500
    assert_html(response)


def test_the_upload_views_the_middleware_guards_exist():
    assert {reverse(name) for name in UPLOAD_VIEWS} == {API, "/jobs/new/", "/jobs/new/code/"}


def test_an_empty_file_among_others_is_refused(team, media_root):
    """An empty part, encoded as HTTP clients encode it (RFC 7578: CRLF before the next
    boundary), is a 400 naming its position, not a job without it."""
    body = (
        b'--B\r\nContent-Disposition: form-data; name="kind"\r\n\r\ncodescan\r\n'
        b'--B\r\nContent-Disposition: form-data; name="files"; filename="a.py"\r\n\r\n'
        b"import os\r\n"
        b'--B\r\nContent-Disposition: form-data; name="files"; filename="empty.py"\r\n\r\n\r\n'
        b"--B--\r\n"
    )
    response = Client().post(
        API,
        data=body,
        content_type="multipart/form-data; boundary=B",
        HTTP_AUTHORIZATION=f"Token {team.member_raw_token}",
    )
    assert response.status_code == 400
    assert response.json() == {"files": {"1": ["The submitted file is empty."]}}
    assert not Job.objects.exists()
