"""Every rule has a page (what it finds, why it locks in, the portable form, an example that
the scanner flags), every finding links to it, and served SARIF names it as the helpUri."""

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils.html import escape

from jobs.domain.codescan import RULES, scan_paths
from jobs.domain.codescan.rule_docs import CATEGORY_NAMES, rule_page
from jobs.services import job_submit
from jobs.tasks import analyze_job
from tests.helpers import repo_archive, token_client


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_every_rule_has_all_four_parts(rule_id):
    page = rule_page(rule_id)
    assert page.what_it_finds and page.why_it_locks_in and page.portable_form
    assert page.portable_form != "—"
    assert page.example.code.strip() and page.example.file_name
    assert page.category_name == CATEGORY_NAMES[RULES[rule_id].category]


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_every_rules_example_is_flagged_by_that_rule(tmp_path, rule_id):
    example = rule_page(rule_id).example
    (tmp_path / example.file_name).write_text(example.code)
    assert rule_id in {f.rule_id for f in scan_paths(tmp_path).findings}


@pytest.mark.django_db
@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_every_rule_page_answers(client, rule_id):
    url = reverse("jobs:rule-detail", args=[rule_id])
    assert url == f"/rules/{rule_id}/"
    page = client.get(url)
    assert page.status_code == 200
    text = page.content.decode()
    rule = RULES[rule_id]
    for heading in ("What it finds", "Why it locks you in", "The portable form", "Example"):
        assert heading in text
    assert f"{rule_id}: {rule.name}" in text
    assert escape(rule.why) in text
    assert escape(rule_page(rule_id).example.code) in text


@pytest.mark.django_db
def test_the_rule_index_lists_every_rule_under_its_category(client):
    text = client.get("/rules/").content.decode()
    for rule_id in RULES:
        assert f'href="/rules/{rule_id}/"' in text
    for code in CATEGORY_NAMES:
        assert f'id="{code}"' in text


@pytest.mark.django_db
def test_an_unknown_rule_is_not_found(client):
    assert client.get("/rules/XYZ999/").status_code == 404
    assert client.get("/rules/tc001/").status_code == 404


@pytest.fixture
def scan(team, media_root):
    job = job_submit(
        team=team.team,
        user=team.member,
        kind="codescan",
        uploads=[SimpleUploadedFile("repo.tar.gz", repo_archive())],
    )
    analyze_job.apply(args=[job.pk])
    job.refresh_from_db()
    return job


def test_every_finding_on_the_report_links_its_rule_page(client, team, scan):
    client.force_login(team.member)
    text = client.get(scan.get_absolute_url()).content.decode()
    for finding in scan.report["findings"]:
        anchor = "finding-" + finding["fingerprint"].replace(":", "-")
        row = re.search(rf'<tr id="{anchor}">(.*?)</tr>', text, re.S)
        assert row is not None, anchor
        assert f'href="/rules/{finding["rule_id"]}/"' in row.group(1)


def test_served_sarif_links_every_rule_to_its_page_on_the_requests_host(
    client, team, scan, settings
):
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "advisor.example"]
    client.force_login(team.member)
    sarif = json.loads(
        client.get(f"{scan.get_absolute_url()}sarif/", HTTP_HOST="advisor.example").content
    )
    rules = sarif["runs"][0]["tool"]["driver"]["rules"]
    assert [rule["helpUri"] for rule in rules] == [
        f"http://advisor.example/rules/{rule_id}/" for rule_id in RULES
    ]
    api = token_client(team.member_raw_token).get(f"/api/v1/jobs/{scan.public_id}/sarif/")
    assert api.json()["runs"][0]["tool"]["driver"]["rules"][0]["helpUri"] == (
        "http://testserver/rules/TC001/"
    )
    assert "helpUri" not in scan.report["sarif"]["runs"][0]["tool"]["driver"]["rules"][0]
