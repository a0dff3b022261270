"""A team dismisses a code-scan finding with a reason, as in GitHub code scanning: kept per
team by fingerprint, carried over to later scans of the same code, counted apart on the
report and marked suppressed in the SARIF, and restorable."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from jobs.models import FindingDismissal, Job
from jobs.services import job_submit
from jobs.tasks import analyze_job
from tests.helpers import make_team, repo_archive


def scanned(team, archive: bytes) -> Job:
    job = job_submit(
        team=team.team,
        user=team.member,
        kind="codescan",
        uploads=[SimpleUploadedFile("repo.tar.gz", archive)],
    )
    assert analyze_job.apply(args=[job.pk]).get() == "done"
    job.refresh_from_db()
    return job


@pytest.fixture
def scan(team, media_root) -> Job:
    return scanned(team, repo_archive())


def page_of(client, job: Job) -> str:
    return client.get(job.get_absolute_url()).content.decode()


def dismiss(client, job: Job, finding: dict, reason: str = "false-positive", comment: str = ""):
    return client.post(
        f"{job.get_absolute_url()}findings/dismiss/",
        {"fingerprint": finding["fingerprint"], "reason": reason, "comment": comment},
    )


def open_rows(page: str) -> int:
    return page.count('<td class="finding">')


def test_a_dismissed_finding_is_listed_and_counted_apart(client, team, scan):
    client.force_login(team.member)
    finding = scan.report["findings"][0]
    before = page_of(client, scan)
    response = dismiss(client, scan, finding, "wont-fix", "kept for the A100 fleet")
    assert response.status_code == 302
    assert response["Location"].endswith(f"#finding-{finding['fingerprint'].replace(':', '-')}")
    after = page_of(client, scan)
    assert open_rows(after) == open_rows(before) - 1
    assert '<dd id="dismissed-count">1 dismissed</dd>' in after
    assert 'id="dismissed-findings"' in after and "Dismissed: won&#x27;t fix" in after
    assert "kept for the A100 fleet" in after
    dismissal = FindingDismissal.objects.get()
    assert (dismissal.team, dismissal.rule_id, dismissal.file) == (
        team.team,
        finding["rule_id"],
        finding["file"],
    )


def test_a_dismissal_carries_over_to_a_second_scan_of_the_same_code(client, team, scan):
    client.force_login(team.member)
    finding = scan.report["findings"][0]
    dismiss(client, scan, finding)
    # Other bytes, same code: a new scan, not the first one's report reused.
    second = scanned(team, repo_archive() + b"\0" * 1024)
    assert second.pk != scan.pk and second.reused_from is None
    page = page_of(client, second)
    assert '<dd id="dismissed-count">1 dismissed</dd>' in page
    assert f'id="finding-{finding["fingerprint"].replace(":", "-")}" class="dismissed"' in page


def test_undo_restores_the_finding(client, team, scan):
    client.force_login(team.member)
    finding = scan.report["findings"][0]
    dismiss(client, scan, finding)
    response = client.post(
        f"{scan.get_absolute_url()}findings/undismiss/", {"fingerprint": finding["fingerprint"]}
    )
    assert response.status_code == 302
    assert not FindingDismissal.objects.exists()
    page = page_of(client, scan)
    assert '<dd id="dismissed-count">0 dismissed</dd>' in page
    assert open_rows(page) == len(scan.report["findings"])


@pytest.mark.parametrize(
    ("reason", "comment", "message"),
    [
        ("", "", "Say why the finding is dismissed."),
        ("looks-fine", "", "Choose a reason: false positive, won&#x27;t fix, used in tests."),
        ("used-in-tests", "x" * 281, "at most 280 characters"),
    ],
)
def test_a_dismissal_needs_a_valid_reason(client, team, scan, reason, comment, message):
    client.force_login(team.member)
    response = dismiss(client, scan, scan.report["findings"][0], reason, comment)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not FindingDismissal.objects.exists()


def test_an_unknown_fingerprint_is_not_found(client, team, scan):
    client.force_login(team.member)
    response = dismiss(client, scan, {"fingerprint": "0" * 32 + ":1"})
    assert response.status_code == 404


def test_dismissals_are_kept_per_team(client, team, scan, media_root):
    other = make_team("Beta")
    client.force_login(other.member)
    finding = scan.report["findings"][0]
    assert dismiss(client, scan, finding).status_code == 404  # another team's job
    assert not FindingDismissal.objects.exists()
    # Beta scans the same code and dismisses the same finding: Alpha's report is unchanged.
    theirs = scanned(other, repo_archive())
    assert dismiss(client, theirs, finding).status_code == 302
    assert FindingDismissal.objects.get().team == other.team
    client.force_login(team.member)
    assert '<dd id="dismissed-count">0 dismissed</dd>' in page_of(client, scan)


def test_dismissing_needs_a_signed_in_member_and_a_post(client, team, scan):
    url = f"{scan.get_absolute_url()}findings/dismiss/"
    assert client.post(url, {}).status_code == 302  # to the sign-in page
    client.force_login(team.member)
    assert client.get(url).status_code == 405


def test_the_page_form_carries_a_csrf_token(team, scan):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(team.member)
    finding = scan.report["findings"][0]
    assert dismiss(client, scan, finding).status_code == 403
    page = page_of(client, scan)
    assert page.count('name="csrfmiddlewaretoken"') >= len(scan.report["findings"])


def test_the_served_sarif_marks_dismissed_results_suppressed(client, team, scan):
    client.force_login(team.member)
    finding = scan.report["findings"][1]
    dismiss(client, scan, finding, "used-in-tests", "benchmark only")
    sarif = json.loads(client.get(f"{scan.get_absolute_url()}sarif/").content)
    results = sarif["runs"][0]["results"]
    suppressed = [r for r in results if "suppressions" in r]
    assert len(suppressed) == 1
    assert suppressed[0]["partialFingerprints"] == {"gpuAdvisorFinding/v1": finding["fingerprint"]}
    assert suppressed[0]["suppressions"] == [
        {"kind": "external", "status": "accepted", "justification": "used in tests: benchmark only"}
    ]
    assert "suppressions" not in scan.report["sarif"]["runs"][0]["results"][1]  # stored as scanned
