"""Every catalogue rule fires on its positive fixtures and stays quiet on its near-misses
(a comment, a docstring, a guard, the portable form).

Fixtures live in tests/fixtures/codescan/rules/<RULE>/{positive,near_miss}/: adding a rule means
adding its catalogue entry and these two folders.
"""

import re
from pathlib import Path

import pytest

from jobs.domain.codescan import RULES, scan_paths

RULE_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "codescan" / "rules"
SPEC = Path(__file__).resolve().parents[3] / "shared" / "portability_rules.md"


def test_every_rule_has_a_positive_and_a_near_miss_fixture():
    assert sorted(p.name for p in RULE_FIXTURES.iterdir()) == sorted(RULES)
    for rule_id in RULES:
        for side in ("positive", "near_miss"):
            assert any((RULE_FIXTURES / rule_id / side).iterdir()), f"{rule_id}/{side} is empty"


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_the_rule_fires_in_every_positive_file(rule_id):
    folder = RULE_FIXTURES / rule_id / "positive"
    report = scan_paths(folder)
    fired = {f.file for f in report.findings if f.rule_id == rule_id}
    assert fired == {path.name for path in folder.iterdir()}


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_the_rule_does_not_fire_on_its_near_misses(rule_id):
    report = scan_paths(RULE_FIXTURES / rule_id / "near_miss")
    assert [f for f in report.findings if f.rule_id == rule_id] == []


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_findings_carry_the_catalogue_text(rule_id):
    rule = RULES[rule_id]
    report = scan_paths(RULE_FIXTURES / rule_id / "positive")
    finding = next(f for f in report.findings if f.rule_id == rule_id)
    assert finding.category == rule.category
    assert (finding.reason, finding.alternative) == (rule.why, rule.alternative)
    assert finding.severity in ("rewrite-risk", "re-tune", "info")
    assert finding.line >= 1 and finding.column >= 1
    assert finding.code and len(finding.code) <= 300 and finding.code == finding.code.strip()


def _plain(markdown: str) -> str:
    unquoted = markdown.replace("`", "").replace("\\|", "|")
    return re.sub(r"(?<!\w)\*(\w+)\*(?!\w)", r"\1", unquoted)  # *emphasis*


def test_catalogue_matches_the_spec():
    """Ids in order, Why and alternative as written (less markdown), and each default: the
    first severity the spec's Sev column names ("rewrite" there means rewrite-risk)."""
    if not SPEC.exists():
        pytest.skip(f"{SPEC} is not here (shared/ is laid beside the checkout)")
    rows = [
        [cell.strip() for cell in re.split(r"(?<!\\)\|", line)]
        for line in SPEC.read_text().splitlines()
        if re.match(r"\| [A-Z]+\d{3} \|", line)
    ]
    assert [cells[1] for cells in rows] == list(RULES)
    for cells in rows:
        rule = RULES[cells[1]]
        assert (rule.why, rule.alternative) == (_plain(cells[6]), _plain(cells[7])), rule.id
    spelled = {"rewrite": "rewrite-risk", "re-tune": "re-tune", "info": "info"}
    for cells in rows:
        first = re.match(r"rewrite|re-tune|info", cells[5])
        assert first is not None, cells[1]
        assert RULES[cells[1]].severity == spelled[first.group()], cells[1]
