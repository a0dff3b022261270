"""A person reads a finished trace report (what was used, what to rent, what to fix first) and
compares two trace jobs before and after a change, on a desktop and on a phone."""

import re
from dataclasses import asdict

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect

from accounts.models import Membership, Team
from advisor.services import rightsizing_report
from catalog.services import catalog_load_bundled
from jobs.domain.traces import analyze_traces
from jobs.models import Job, JobKind, JobStatus
from tests.helpers import PASSWORD, TRACES, sign_in

PHONE = {"width": 390, "height": 844}
WORKERS_0 = (
    TRACES
    / "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
)
WORKERS_4 = TRACES / "kineto/plugin/samples/resnet50_num_workers_4/worker0.pt.trace.json.gz"


def _finished_trace_job(team: Team, path) -> Job:
    """A done trace job whose report is what the worker writes for this file."""
    summary = analyze_traces([path])
    report = rightsizing_report(summary=asdict(summary), ranks=summary.ranks)
    return Job.objects.create(team=team, kind=JobKind.TRACE, status=JobStatus.DONE, report=report)


@pytest.fixture
def jobs(live_server, transactional_db) -> tuple[str, Job, Job]:
    catalog_load_bundled()
    team = Team.objects.create(name="Alpha", slug="alpha")
    user = get_user_model().objects.create_user("ada", password=PASSWORD)
    Membership.objects.create(team=team, user=user)
    before = _finished_trace_job(team, WORKERS_0)
    after = _finished_trace_job(team, WORKERS_4)
    return live_server.url, before, after


def _sideways_px(page: Page) -> int:
    return page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )


def test_the_report_says_what_to_fix_first_and_two_jobs_compare(page: Page, jobs):
    site, before, after = jobs
    sign_in(page, site)
    page.goto(f"{site}{before.get_absolute_url()}")
    summary = page.locator("#recommendation")
    expect(summary.locator("#summary-used")).to_contain_text("ms per step over 5 steps")
    expect(summary.locator("#summary-rent .headline")).to_have_text(before.report["rent"])
    expect(summary.locator("#summary-fix")).to_contain_text("DataLoader")
    expect(page.locator("#fixes li.fix").first).to_contain_text("num_workers")
    expect(page.locator("#idle-breakdown")).to_contain_text("host wait")
    expect(page.get_by_role("heading", name="Step times")).to_be_visible()
    expect(page.locator("table.top-kernels tbody tr")).to_have_count(10)
    folded = page.locator("#no-offer")
    expect(folded.locator("table")).to_be_hidden()
    folded.locator("summary").click()
    expect(folded.locator("table")).to_be_visible()

    page.goto(f"{site}/jobs/")
    for job in (after, before):
        page.get_by_label(f"Compare job {str(job.public_id)[:12]}").check()
    page.get_by_role("button", name="Compare selected").click()
    expect(page).to_have_url(
        re.compile(rf"/jobs/compare/\?a={before.public_id}&b={after.public_id}$")
    )
    expect(page.locator("#compare-metrics")).to_contain_text("Step time (mean)")
    expect(page.locator("#compare-kernels tbody tr")).to_have_count(10)


def test_the_report_and_the_comparison_fit_a_phone(page: Page, jobs):
    site, before, after = jobs
    page.set_viewport_size(PHONE)
    sign_in(page, site)
    page.goto(f"{site}{before.get_absolute_url()}")
    expect(page.locator("#summary-fix")).to_be_visible()
    page.locator("#no-offer summary").click()
    assert _sideways_px(page) == 0
    page.goto(f"{site}/jobs/compare/?a={before.public_id}&b={after.public_id}")
    expect(page.locator("#compare-metrics")).to_be_visible()
    assert _sideways_px(page) == 0
    page.goto(f"{site}/jobs/")
    assert _sideways_px(page) == 0
