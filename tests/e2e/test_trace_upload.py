"""A person uploads a trace, watches the job's progress, and reads the report."""

import json
import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect

from accounts.models import Membership, Team
from catalog.services import catalog_load_bundled
from tests.helpers import (
    LARGEST_TRACE,
    PASSWORD,
    TRACES,
    needs_real_services,
    repo_archive,
    sign_in,
)


@pytest.fixture
def site(live_server, worker) -> str:
    catalog_load_bundled()
    team = Team.objects.create(name="Alpha", slug="alpha")
    user = get_user_model().objects.create_user("ada", password=PASSWORD)
    Membership.objects.create(team=team, user=user)
    return live_server.url


@needs_real_services
def test_upload_a_trace_watch_the_progress_and_read_the_report(page: Page, site: str):
    sign_in(page, site)

    page.goto(f"{site}/jobs/new/")
    page.get_by_label(re.compile("Drop trace files here")).set_input_files(str(LARGEST_TRACE))
    page.get_by_role("button", name="Upload and analyse").click()

    expect(page).to_have_url(re.compile(r"/jobs/[0-9a-f-]{36}/$"))
    expect(page.locator("#progress progress")).to_be_visible()  # pending or running
    expect(page.get_by_role("heading", name="Where the GPU time went")).to_be_visible(
        timeout=60_000
    )
    expect(page.locator("svg.time-breakdown")).to_be_visible()
    expect(page.locator("#rank-table tbody tr")).to_have_count(1)
    expect(page.locator("#rank-table")).to_contain_text("V100")
    expect(page.get_by_role("heading", name=re.compile("Top kernels"))).to_be_visible()


@needs_real_services
def test_upload_an_nvidia_smi_log_and_read_the_recommendation(page: Page, site: str):
    sign_in(page, site)
    page.goto(f"{site}/jobs/new/")
    log = TRACES / "nvidia-smi" / "query_gpu_units_2gpus.csv"
    page.get_by_label(re.compile("Drop trace files here")).set_input_files(str(log))
    page.get_by_role("button", name="Upload and analyse").click()
    recommendation = page.locator("#recommendation .headline")
    expect(recommendation).to_be_visible(timeout=60_000)
    expect(recommendation).to_contain_text("less per step")
    # The reasoning (how idle the GPUs were) is folded under the move.
    page.locator("#summary-rent details.why-rent summary").click()
    expect(page.locator("#summary-rent details.why-rent")).to_contain_text("idle")
    expect(page.locator("svg.series").first).to_be_visible()
    expect(page.locator("#candidates tbody tr").first).to_be_visible()


@needs_real_services
def test_upload_a_repository_read_the_scorecard_and_download_sarif(page: Page, site: str, tmp_path):
    archive = tmp_path / "repo.tar.gz"
    archive.write_bytes(repo_archive())
    sign_in(page, site)
    page.goto(f"{site}/jobs/new/code/")
    page.get_by_label(re.compile("Drop the archive or files here")).set_input_files(str(archive))
    page.get_by_role("button", name="Upload and scan").click()
    expect(page.locator("#scorecard")).to_be_visible(timeout=60_000)
    expect(page.locator("#scorecard tbody tr")).to_have_count(4)
    expect(page.locator("#verdicts")).to_contain_text("AMD ROCm")
    page.get_by_label("Severity").select_option("rewrite-risk")
    page.get_by_role("button", name="Filter").click()
    for row in page.locator("#findings tbody tr").all_inner_texts():
        assert "rewrite-risk" in row
    with page.expect_download() as download:
        page.get_by_role("link", name="Download SARIF 2.1.0").click()
    sarif = json.loads(Path(download.value.path()).read_text())
    assert sarif["version"] == "2.1.0" and sarif["runs"][0]["results"]
