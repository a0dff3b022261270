"""The code-scan report page: citations link to the findings they name, nothing is cut off,
category codes have a legend, findings show the lines around them, and reports stored before
fingerprints and snippets still render."""

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from jobs.domain.codescan.rule_docs import CATEGORY_NAMES
from jobs.services import job_submit
from jobs.tasks import analyze_job
from tests.helpers import repo_archive


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


def test_scorecard_and_verdict_citations_link_to_their_finding_rows(client, team, scan):
    client.force_login(team.member)
    text = client.get(scan.get_absolute_url()).content.decode()
    cited = [ref for row in scan.report["scorecard"] for ref in row["evidence"]]
    cited += [ref for verdict in scan.report["verdicts"].values() for ref in verdict["deciding"]]
    by_ref = {f"{f['rule_id']} {f['file']}:{f['line']}": f for f in scan.report["findings"]}
    linked = [ref for ref in cited if ref in by_ref]
    assert linked  # the sample repository's scorecard cites findings
    for ref in linked:
        anchor = "finding-" + by_ref[ref]["fingerprint"].replace(":", "-")
        assert f'<a href="?page=1#{anchor}">{ref}</a>' in text
        assert f'<tr id="{anchor}">' in text


def test_long_evidence_and_deciding_lists_are_shown_whole(client, team, scan):
    deciding = [f"WARP003 csrc/k{n}.cu:{n}" for n in range(1, 13)]
    scan.report = {
        **scan.report,
        "verdicts": {"AMD ROCm": {"verdict": "rewrite", "deciding": deciding}},
    }
    scan.save(update_fields=["report"])
    client.force_login(team.member)
    text = client.get(scan.get_absolute_url()).content.decode()
    verdicts = re.search(r'<table class="data stacked" id="verdicts">(.*?)</table>', text, re.S)
    assert verdicts is not None
    assert all(f"<li>{ref}</li>" in verdicts.group(1) for ref in deciding)
    assert "…" not in verdicts.group(1)


def test_the_report_has_a_legend_of_category_codes(client, team, scan):
    client.force_login(team.member)
    text = client.get(scan.get_absolute_url()).content.decode()
    legend = re.search(r'id="category-legend".*?</details>', text, re.S).group(0)
    for code, name in CATEGORY_NAMES.items():
        assert f"{code}</a></dt><dd>{name}</dd>" in legend


def test_a_finding_shows_the_lines_around_it(client, team, scan):
    client.force_login(team.member)
    text = client.get(scan.get_absolute_url()).content.decode()
    finding = next(f for f in scan.report["findings"] if f["rule_id"] == "WARP003")
    assert finding["snippet_start_line"] == finding["line"] - 3
    assert len(finding["snippet"].split("\n")) == 7
    row = re.search(
        rf'<tr id="finding-{finding["fingerprint"].replace(":", "-")}">(.*?)</tr>', text, re.S
    ).group(1)
    numbers = [int(n) for n in re.findall(r'<span class="number">(\d+)</span>', row)]
    assert numbers == list(range(finding["line"] - 3, finding["line"] + 4))
    assert f'<span class="line hit"><span class="number">{finding["line"]}</span>' in row


def test_a_report_stored_before_fingerprints_and_snippets_still_renders(client, team, scan):
    old = [
        {k: v for k, v in f.items() if k not in ("fingerprint", "snippet", "snippet_start_line")}
        for f in scan.report["findings"]
    ]
    scan.report = {**scan.report, "findings": old}
    scan.save(update_fields=["report"])
    client.force_login(team.member)
    text = client.get(scan.get_absolute_url()).content.decode()
    assert text.count('<td class="finding">') == len(old)
    assert f"<code>{old[0]['code']}</code>" in text
    response = client.post(
        f"{scan.get_absolute_url()}findings/dismiss/",
        {
            "fingerprint": re.search(r'name="fingerprint" value="([^"]+)"', text).group(1),
            "reason": "false-positive",
        },
    )
    assert response.status_code == 302
    assert (
        '<dd id="dismissed-count">1 dismissed</dd>'
        in client.get(scan.get_absolute_url()).content.decode()
    )
