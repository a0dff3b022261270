"""Code scans as jobs and as a CLI: the report, SARIF, the page and its filters, and a big
report capped, paged and kept out of the job lists."""

import json
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from jobs.models import Job, JobStatus
from jobs.services import job_submit
from jobs.tasks import analyze_job
from tests.helpers import CODESCAN_REPO, make_team, repo_archive, token_client
from tests.jobs.test_codescan_uploads import many_findings


def scan_cli(*args: str) -> tuple[str, int]:
    out = StringIO()
    try:
        call_command("scan_code", *args, stdout=out)
    except SystemExit as exit_:
        return out.getvalue(), int(exit_.code)
    return out.getvalue(), 0


def test_scan_code_json_has_the_fields_a_ci_pipeline_uses():
    output, code = scan_cli(str(CODESCAN_REPO), "--format", "json")
    report = json.loads(output)
    assert code == 0
    assert report["findings"]
    for finding in report["findings"]:
        assert {"file", "line", "rule_id", "category", "severity"} <= set(finding)
        assert not finding["file"].startswith("/")  # relative to the scanned root
        assert finding["severity"] in {"rewrite-risk", "re-tune", "info"}
    assert {"scorecard", "verdicts", "skipped"} <= set(report)


def test_scan_code_fails_the_pipeline_on_rewrite_risk_only_when_asked(tmp_path):
    _, code = scan_cli(str(CODESCAN_REPO), "--fail-on", "rewrite-risk")
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


def _scanned(team, upload: SimpleUploadedFile) -> Job:
    """A code scan of `upload`, run in this process to its end: done."""
    job = job_submit(team=team.team, user=team.member, kind="codescan", uploads=[upload])
    assert analyze_job.apply(args=[job.pk]).get() == "done"
    job.refresh_from_db()
    return job


@pytest.fixture
def scanned(team, media_root):
    return _scanned(team, SimpleUploadedFile("repo.tar.gz", repo_archive()))


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
            "files": [SimpleUploadedFile("train.py", (CODESCAN_REPO / "train.py").read_bytes())],
        },
        format="multipart",
    )
    assert response.status_code == 201
    job = Job.objects.get(public_id=response.json()["id"])
    analyze_job.apply(args=[job.pk])
    body = api.get(f"/api/v1/jobs/{job.public_id}/").json()
    assert body["status"] == "done" and body["report"]["files_scanned"] == 1
    findings = api.get(body["findings_url"]).json()
    assert {f["file"] for f in findings["results"]} == {"train.py"}
    assert findings["count"] == body["report"]["findings_total"]
    assert api.get(body["sarif_url"]).json()["version"] == "2.1.0"


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


# --- big reports: capped, paged, and never loaded by a list ----------------------------------


@pytest.fixture
def noisy(team, media_root):
    """A done code scan of one file with 9,000 findings (6,000 DEV001, 3,000 PREC001)."""
    return _scanned(team, SimpleUploadedFile("many.py", many_findings()))


# WARP003 on a line that ends in a NUL, past the first 8 KiB of the file.
KERNEL_WITH_NUL = b"__global__ void k(float* x) { x[threadIdx.x % 32] = 0; } // \x00\n"


def rows(page: str) -> int:
    return page.count('<td class="finding">')


def test_a_noisy_scan_stores_a_capped_report_that_counts_everything(noisy):
    """Failed before the fix: all 9,000 findings were stored (the 50,000 of the issue made a
    22 MB page and a 37 MB API response)."""
    report = noisy.report
    assert len(report["findings"]) == 400
    assert report["findings_dropped_by_rule"] == {"DEV001": 5_800, "PREC001": 2_800}
    assert report["findings_total"] == sum(report["counts"]["category"].values()) == 9_000
    assert len(report["sarif"]["runs"][0]["results"]) == 400
    assert len(json.dumps(report)) < 1_500_000


def test_the_page_pages_findings_and_keeps_the_filters(client, team, noisy):
    """Failed before the fix: every finding was one row of one page."""
    client.force_login(team.member)
    url = noisy.get_absolute_url()
    first = client.get(url).content.decode()
    assert rows(first) == 100
    assert 'id="findings-dropped"' in first and "DEV001</strong>: 5800 more" in first
    assert '<dd id="findings-total">9000 (400 listed)</dd>' in first
    filtered = client.get(url, {"category": "DEV"}).content.decode()
    assert rows(filtered) == 100 and "page 1 of 2" in filtered
    assert 'href="?category=DEV&amp;page=2#findings"' in filtered
    last = client.get(url, {"category": "DEV", "page": 2}).content.decode()
    assert rows(last) == 100 and "page 2 of 2" in last and "PREC001</strong><br>" not in last
    assert 'href="?category=DEV&amp;page=1#findings"' in last
    assert rows(client.get(url, {"page": "junk"}).content.decode()) == 100


def test_a_scan_that_stopped_counting_says_at_least_on_its_page(client, team, noisy):
    """A report whose scan reached its findings ceiling (ScanLimits.max_findings)."""
    noisy.report = {**noisy.report, "counts_complete": False}
    noisy.save(update_fields=["report"])
    client.force_login(team.member)
    page = client.get(noisy.get_absolute_url()).content.decode()
    assert '<dd id="findings-total">at least 9000 (400 listed)</dd>' in page
    assert 'id="counts-incomplete"' in page and "the counts are lower bounds" in page
    assert "are over all 9000 findings" not in page


def test_the_api_pages_findings_and_keeps_the_job_small(team, noisy):
    """Failed before the fix: no findings endpoint; the job detail carried every finding and
    the SARIF again."""
    api = token_client(team.member_raw_token)
    detail = api.get(f"/api/v1/jobs/{noisy.public_id}/")
    assert "findings" not in detail.json()["report"] and "sarif" not in detail.json()["report"]
    assert detail.json()["report"]["findings_dropped_by_rule"] == {
        "DEV001": 5_800,
        "PREC001": 2_800,
    }
    assert len(detail.content) < 20_000
    page = api.get(detail.json()["findings_url"], {"category": "PREC", "page": 2}).json()
    assert page["count"] == 200 and len(page["results"]) == 100
    assert {f["rule_id"] for f in page["results"]} == {"PREC001"}
    assert page["next"] is None and "category=PREC" in page["previous"]
    assert set(page["results"][0]) == {
        "rule_id", "category", "severity", "file", "line", "column", "code", "reason",
        "alternative", "context",
    }  # fmt: skip
    assert api.get(detail.json()["findings_url"], {"page": 9}).status_code == 404
    sarif = api.get(detail.json()["sarif_url"]).json()
    assert sarif["runs"][0]["properties"]["findingsTotal"] == 9_000
    outsider = token_client(make_team("Beta").member_raw_token)
    assert outsider.get(detail.json()["findings_url"]).status_code == 404
    assert outsider.get(detail.json()["sarif_url"]).status_code == 404


def test_findings_and_sarif_of_a_trace_job_are_not_found(team, media_root):
    api = token_client(team.member_raw_token)
    job = job_submit(
        team=team.team, user=team.member, kind="trace", uploads=[SimpleUploadedFile("t", b"{}")]
    )
    body = api.get(f"/api/v1/jobs/{job.public_id}/").json()
    assert body["findings_url"] is None and body["sarif_url"] is None
    assert api.get(f"/api/v1/jobs/{job.public_id}/findings/").status_code == 404
    assert api.get(f"/api/v1/jobs/{job.public_id}/sarif/").status_code == 404


def report_column_read(queries: CaptureQueriesContext) -> bool:
    jobs_read = [q["sql"] for q in queries.captured_queries if 'FROM "jobs_job"' in q["sql"]]
    assert jobs_read  # the page did list jobs
    return any('"jobs_job"."report"' in sql for sql in jobs_read)


def test_job_lists_never_load_the_report(client, team, noisy):
    """Failed before the fix: both lists selected the report column (1.2 s for the HTML
    list of the issue)."""
    client.force_login(team.member)
    api = token_client(team.member_raw_token)
    with CaptureQueriesContext(connection) as html_list:
        assert client.get("/jobs/").status_code == 200
    with CaptureQueriesContext(connection) as api_list:
        assert api.get("/api/v1/jobs/").status_code == 200
    with CaptureQueriesContext(connection) as detail:
        assert api.get(f"/api/v1/jobs/{noisy.public_id}/").status_code == 200
    assert not report_column_read(html_list) and not report_column_read(api_list)
    assert report_column_read(detail)  # the check sees the column when it is read


def test_unscanned_uploads_are_on_the_page_and_in_the_api(client, team, media_root):
    """Failed before the fix: done with 0 files scanned and nothing said why; and late-nul.cu
    crashed the task (DataError): its NUL reached the report, which PostgreSQL's jsonb
    refuses."""
    job = job_submit(
        team=team.team,
        user=team.member,
        kind="codescan",
        uploads=[
            SimpleUploadedFile("weights.bin", b"\x00\x01" * 5000),
            SimpleUploadedFile("late-nul.cu", b"// x\n" * 3000 + KERNEL_WITH_NUL),
        ],
    )
    assert analyze_job.apply(args=[job.pk]).get() == "done"
    client.force_login(team.member)
    page = client.get(job.get_absolute_url()).content.decode()
    assert '<details id="skipped-paths" open>' in page
    assert "<code>weights.bin</code>: not a type the scanner reads (.bin files)" in page
    assert "<code>late-nul.cu</code>: binary file" in page
    body = token_client(team.member_raw_token).get(f"/api/v1/jobs/{job.public_id}/").json()
    assert body["report"]["files_scanned"] == 0
    assert {item["path"] for item in body["report"]["skipped"]} == {"weights.bin", "late-nul.cu"}
