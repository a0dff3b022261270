"""Code scans as jobs and as a CLI: the report, SARIF, the page and its filters."""

import io
import json
import tarfile
from io import StringIO
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from jobs.models import Job, JobStatus
from jobs.services import job_submit
from jobs.tasks import analyze_job
from tests.accounts.conftest import token_client

REPO = Path(__file__).resolve().parents[1] / "fixtures" / "codescan" / "repo"


def repo_archive() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.add(REPO, arcname="repo")
    return buffer.getvalue()


def scan_cli(*args: str) -> tuple[str, int]:
    out = StringIO()
    try:
        call_command("scan_code", *args, stdout=out)
    except SystemExit as exit_:
        return out.getvalue(), int(exit_.code)
    return out.getvalue(), 0


def test_scan_code_json_has_the_fields_a_ci_pipeline_uses():
    output, code = scan_cli(str(REPO), "--format", "json")
    report = json.loads(output)
    assert code == 0
    assert report["findings"]
    for finding in report["findings"]:
        assert {"file", "line", "rule_id", "category", "severity"} <= set(finding)
        assert not finding["file"].startswith("/")  # relative to the scanned root
        assert finding["severity"] in {"rewrite-risk", "re-tune", "info"}
    assert {"scorecard", "verdicts", "skipped"} <= set(report)


def test_scan_code_fails_the_pipeline_on_rewrite_risk_only_when_asked(tmp_path):
    _, code = scan_cli(str(REPO), "--fail-on", "rewrite-risk")
    assert code == 1
    clean = tmp_path / "clean.py"
    clean.write_text("import torch\n\ndef f(x):\n    return torch.matmul(x, x)\n")
    _, code = scan_cli(str(clean), "--fail-on", "rewrite-risk")
    assert code == 0


def test_scan_code_writes_sarif_2_1_0(tmp_path):
    archive = tmp_path / "repo.tar.gz"
    archive.write_bytes(repo_archive())
    output, _ = scan_cli(str(archive), "--format", "sarif")
    sarif = json.loads(output)
    assert sarif["version"] == "2.1.0"
    rule_ids = {rule["id"] for rule in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert {result["ruleId"] for result in sarif["runs"][0]["results"]} <= rule_ids


@pytest.fixture
def scanned(team, media_root):
    job = job_submit(
        team=team.team,
        user=team.member,
        kind="codescan",
        uploads=[SimpleUploadedFile("repo.tar.gz", repo_archive())],
    )
    assert analyze_job.apply(args=[job.pk]).get() == "done"
    job.refresh_from_db()
    return job


def test_a_code_scan_job_reports_findings_scorecard_verdicts_and_sarif(scanned):
    report = scanned.report
    assert scanned.status == JobStatus.DONE
    assert report["findings"] and len(report["scorecard"]) == 4
    assert set(report["verdicts"]) >= {"AMD ROCm", "Intel oneAPI"}
    assert report["sarif"]["version"] == "2.1.0"


def test_the_api_takes_code_uploads_and_serves_the_report(team, media_root):
    api = token_client(team.member_raw_token)
    response = api.post(
        "/api/v1/jobs/",
        {
            "kind": "codescan",
            "files": [SimpleUploadedFile("train.py", (REPO / "train.py").read_bytes())],
        },
        format="multipart",
    )
    assert response.status_code == 201
    job = Job.objects.get(public_id=response.json()["id"])
    analyze_job.apply(args=[job.pk])
    body = api.get(f"/api/v1/jobs/{job.public_id}/").json()
    assert body["status"] == "done" and body["report"]["files_scanned"] == 1
    assert {f["file"] for f in body["report"]["findings"]} == {"train.py"}


def test_the_page_filters_findings_and_offers_the_sarif_download(client, team, scanned):
    client.force_login(team.member)
    page = client.get(scanned.get_absolute_url()).content.decode()
    assert 'id="scorecard"' in page and 'id="verdicts"' in page and "Download SARIF" in page
    severity = scanned.report["findings"][0]["severity"]
    filtered = client.get(scanned.get_absolute_url(), {"severity": severity}).content.decode()
    shown = filtered.count('<td class="finding">')
    expected = sum(1 for f in scanned.report["findings"] if f["severity"] == severity)
    assert shown == expected
    sarif = client.get(f"{scanned.get_absolute_url()}sarif/")
    assert sarif["Content-Type"] == "application/sarif+json"
    assert "attachment" in sarif["Content-Disposition"]
    assert json.loads(sarif.content)["version"] == "2.1.0"


def test_a_hostile_archive_fails_the_job_with_a_reason(team, media_root):
    job = job_submit(
        team=team.team,
        user=team.member,
        kind="codescan",
        uploads=[SimpleUploadedFile("repo.zip", b"PK\x03\x04" + b"\0" * 64)],
    )
    assert analyze_job.apply(args=[job.pk]).get() == "failed"
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and job.error
