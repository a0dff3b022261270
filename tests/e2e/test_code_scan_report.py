"""A person reads a finished code scan: the category legend, a finding's rule page, dismissing
a finding (counted apart) and restoring it; and on a phone the report does not scroll
sideways."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from playwright.sync_api import Page, expect

from accounts.models import Membership, Team
from jobs.models import Job
from jobs.services import job_submit
from jobs.tasks import analyze_job
from tests.e2e.test_phone import PHONE, _sideways_overflow
from tests.helpers import PASSWORD, repo_archive, sign_in


@pytest.fixture
def scan(live_server, transactional_db, media_root) -> Job:
    """A finished code scan of the sample repository, run in this process."""
    team = Team.objects.create(name="Alpha", slug="alpha")
    user = get_user_model().objects.create_user("ada", password=PASSWORD)
    Membership.objects.create(team=team, user=user)
    job = job_submit(
        team=team,
        user=user,
        kind="codescan",
        uploads=[SimpleUploadedFile("repo.tar.gz", repo_archive())],
    )
    assert analyze_job.apply(args=[job.pk]).get() == "done"
    job.refresh_from_db()
    return job


def test_read_the_legend_follow_a_rule_dismiss_and_restore_a_finding(
    page: Page, live_server, scan: Job
):
    site = live_server.url
    sign_in(page, site)
    page.goto(f"{site}{scan.get_absolute_url()}")
    legend = page.locator("#category-legend")
    expect(legend).to_be_visible()
    expect(legend).to_contain_text("WARP")
    expect(legend).to_contain_text("warp width")

    finding = scan.report["findings"][0]
    row = page.locator(f"#finding-{finding['fingerprint'].replace(':', '-')}")
    expect(row.locator("pre.snippet .line.hit")).to_contain_text(finding["code"])
    row.get_by_role("link", name=f"About {finding['rule_id']}").click()
    expect(page).to_have_url(re.compile(rf"/rules/{finding['rule_id']}/$"))
    expect(page.get_by_role("heading", name="Why it locks you in")).to_be_visible()
    expect(page.locator("pre.example")).not_to_be_empty()
    page.go_back()

    listed = len(scan.report["findings"])
    expect(page.locator("#dismissed-count")).to_have_text("0 dismissed")
    expect(page.locator("#findings td.finding")).to_have_count(listed)
    row.get_by_text("Dismiss…").click()
    row.get_by_label("false positive").check()
    row.get_by_label("Comment (optional)").fill("a test helper, never shipped")
    row.get_by_role("button", name="Dismiss this finding").click()

    expect(page.locator("#dismissed-count")).to_have_text("1 dismissed")
    expect(page.get_by_role("heading", name="1 dismissed")).to_be_visible()
    expect(page.locator("#findings td.finding")).to_have_count(listed - 1)
    dismissed = page.locator("#dismissed-findings")
    expect(dismissed).to_contain_text("Dismissed: false positive")
    expect(dismissed).to_contain_text("a test helper, never shipped")

    dismissed.get_by_role("button", name=re.compile(f"^Restore {finding['rule_id']}")).click()
    expect(page.locator("#dismissed-count")).to_have_text("0 dismissed")
    expect(page.locator("#dismissed-findings")).to_have_count(0)
    expect(page.locator("#findings td.finding")).to_have_count(listed)


def test_the_report_does_not_scroll_sideways_on_a_phone(page: Page, live_server, scan: Job):
    site = live_server.url
    page.set_viewport_size(PHONE)
    sign_in(page, site)
    page.goto(f"{site}{scan.get_absolute_url()}")
    expect(page.locator("#scorecard")).to_be_visible()
    assert _sideways_overflow(page) == 0
    # An opened dismissal form, and a rule page, fit too.
    page.locator("#findings details.dismiss summary").first.click()
    assert _sideways_overflow(page) == 0
    page.goto(f"{site}/rules/TC002/")
    assert _sideways_overflow(page) == 0
    page.goto(f"{site}/rules/")
    assert _sideways_overflow(page) == 0
