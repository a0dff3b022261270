"""The trace report page (summary lines, fixes, idle split, step times, top kernels, folded
candidates) and the before/after comparison of two trace jobs, team by team."""

import re
from html import unescape
from pathlib import Path

import pytest

from jobs.models import Job, JobKind, JobStatus
from jobs.services import job_submit
from jobs.tasks import analyze_job
from tests.helpers import TRACES, make_team, upload

WORKERS_0 = (
    TRACES
    / "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
)
WORKERS_4 = TRACES / "kineto/plugin/samples/resnet50_num_workers_4/worker0.pt.trace.json.gz"


def _finished_job(team, path: Path) -> Job:
    job = job_submit(team=team.team, user=team.member, kind="trace", uploads=[upload(path)])
    analyze_job.apply(args=[job.pk])
    job.refresh_from_db()
    assert job.status == JobStatus.DONE
    return job


def _text(html: str) -> str:
    return unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)))


def _section(page: str, element_id: str) -> str:
    start = page.index(f'id="{element_id}"')
    return page[start : page.index("</section>", start)]


@pytest.fixture
def page_of(client, team, media_root, catalog):
    def open_page(path: Path) -> tuple[Job, str]:
        job = _finished_job(team, path)
        client.force_login(team.member)
        response = client.get(job.get_absolute_url())
        assert response.status_code == 200
        return job, response.content.decode()

    return open_page


def test_the_report_opens_with_what_was_used_what_to_rent_and_what_to_fix_first(page_of):
    job, page = page_of(WORKERS_0)
    summary = _text(_section(page, "recommendation"))
    assert page.index('id="recommendation"') < page.index('id="candidates"')
    steps = job.report["ranks"][0]["step_count"]
    mean_ms = job.report["ranks"][0]["step_mean_us"] / 1000
    assert f"Tesla V100-DGXS-32GB, {mean_ms:,.0f} ms per step over {steps} steps" in summary
    assert job.report["rent"] in summary
    fix_first = summary[summary.index("What to fix first") :]
    assert "Load batches in DataLoader worker processes" in fix_first
    assert "data loading on the main thread" in fix_first


def test_the_fixes_name_their_knobs_and_the_idle_split_adds_up(page_of):
    job, page = page_of(WORKERS_0)
    fixes = _text(_section(page, "fixes"))
    for knob in ("num_workers", "pin_memory=True", "prefetch_factor", "persistent_workers=True"):
        assert knob in fixes
    rank = job.report["ranks"][0]
    idle = rank["idle_host_wait_us"] + rank["idle_kernel_wait_us"] + rank["idle_other_us"]
    host_share = 100 * rank["idle_host_wait_us"] / idle
    assert f"host wait {host_share:.1f}%" in _text(_section(page, "idle-breakdown"))


def test_step_times_and_top_kernels_show_with_their_share_of_gpu_time(page_of):
    job, page = page_of(WORKERS_0)
    rank = job.report["ranks"][0]
    text = _text(page)
    assert f"Slowest step {rank['step_slowest_name']}: {rank['step_slowest_us'] / 1000:.1f} ms" in (
        text
    )
    gpu_time = sum(rank["category_time_us"].values())
    top_name, _, _, top_us = rank["top_kernels"][0]
    assert f"{100 * top_us / gpu_time:.1f}%" in text
    assert top_name[:60] in text


def test_candidates_without_an_offer_are_folded_under_the_table(page_of):
    job, page = page_of(WORKERS_0)
    fitting = [c for c in job.report["candidates"] if c["fits"]]
    unoffered = [c for c in fitting if not c["usd_per_1000_steps"]]
    table = page[
        page.index('id="candidates"') : page.index("</table>", page.index('id="candidates"'))
    ]
    assert table.count("<tr") - 1 == len(fitting) - len(unoffered)
    assert "no offer" not in _text(table)
    assert unoffered  # the bundled catalogue prices only some of the GPUs that fit
    start = page.index('id="no-offer"')
    folded = _text(page[start : page.index("</details>", start)])
    assert f"{len(unoffered)} candidates with no offer" in folded
    for candidate in unoffered:
        assert candidate["gpu_name"] in folded


@pytest.fixture
def two_jobs(team, media_root, catalog) -> tuple[Job, Job]:
    return _finished_job(team, WORKERS_0), _finished_job(team, WORKERS_4)


def test_two_trace_jobs_compare_side_by_side_with_the_differences(client, team, two_jobs):
    before, after = two_jobs
    client.force_login(team.member)
    response = client.get(f"/jobs/compare/?a={before.public_id}&b={after.public_id}")
    assert response.status_code == 200
    page = response.content.decode()
    old_ms = before.report["ranks"][0]["step_mean_us"] / 1000
    new_ms = after.report["ranks"][0]["step_mean_us"] / 1000
    metrics = _text(page[page.index('id="compare-metrics"') :])
    assert f"Step time (mean) {old_ms:.1f} ms {new_ms:.1f} ms {new_ms - old_ms:.1f} ms" in metrics
    old_idle, new_idle = before.report["ranks"][0]["idle_pct"], after.report["ranks"][0]["idle_pct"]
    assert f"GPU idle {old_idle:.1f} % {new_idle:.1f} %" in metrics
    assert page.count("<tr", page.index('id="compare-kernels"')) == 11  # header + 10 kernels
    assert str(before.public_id)[:10] in page and str(after.public_id)[:10] in page


def test_another_teams_job_is_not_found(client, team, two_jobs):
    before, _ = two_jobs
    other = make_team("Beta")
    client.force_login(other.member)
    own = Job.objects.create(
        team=other.team, kind=JobKind.TRACE, status=JobStatus.DONE, report=before.report
    )
    response = client.get(f"/jobs/compare/?a={before.public_id}&b={own.public_id}")
    assert response.status_code == 404
    assert (
        client.get(f"/jobs/compare/?job={before.public_id}&job={own.public_id}").status_code == 404
    )
    assert client.get("/jobs/compare/?a=not-a-job&b=x").status_code == 404


def test_an_unfinished_job_or_a_code_scan_gets_a_clear_message(client, team, two_jobs):
    before, _ = two_jobs
    queued = Job.objects.create(team=team.team, kind=JobKind.TRACE)
    scan = Job.objects.create(
        team=team.team, kind=JobKind.CODESCAN, status=JobStatus.DONE, report={"findings": []}
    )
    client.force_login(team.member)
    response = client.get(f"/jobs/compare/?a={before.public_id}&b={queued.public_id}")
    assert response.status_code == 400
    assert "The after job has not finished (it is queued)" in _text(response.content.decode())
    response = client.get(f"/jobs/compare/?a={scan.public_id}&b={before.public_id}")
    assert "The before job is a code scan, not a trace analysis." in _text(
        response.content.decode()
    )
    response = client.get(f"/jobs/compare/?a={before.public_id}")
    assert response.status_code == 400 and "Choose the after job" in response.content.decode()


def test_ticking_two_jobs_in_the_list_opens_the_shareable_comparison_older_first(
    client, team, two_jobs
):
    before, after = two_jobs
    client.force_login(team.member)
    listing = client.get("/jobs/").content.decode()
    assert listing.count('name="job"') == 2
    response = client.get(f"/jobs/compare/?job={after.public_id}&job={before.public_id}")
    assert response.status_code == 302
    assert response["Location"] == f"/jobs/compare/?a={before.public_id}&b={after.public_id}"
    response = client.get(f"/jobs/compare/?job={after.public_id}")
    assert response.status_code == 400 and "Tick exactly two" in response.content.decode()


def test_the_job_page_offers_the_teams_other_trace_jobs_to_compare_with(client, team, two_jobs):
    before, after = two_jobs
    client.force_login(team.member)
    page = client.get(after.get_absolute_url()).content.decode()
    start = page.index('class="compare-form"')
    form = page[start : page.index("</form>", start)]
    assert f'name="b" value="{after.public_id}"' in form
    assert f'value="{before.public_id}"' in form


def test_a_log_without_kernels_says_so_and_opens_the_verdicts_evidence(page_of):
    job, page = page_of(TRACES / "nvidia-smi" / "query_gpu_units_2gpus.csv")
    summary = _text(_section(page, "recommendation"))
    assert "What to fix first this log shows no kernels" in summary
    assert 'id="fixes"' not in page and 'id="idle-breakdown"' not in page
    assert '<details class="panel" id="evidence" open>' in page
    assert job.report["verdict"]["kind"] in _text(page[page.index('id="evidence"') :])
