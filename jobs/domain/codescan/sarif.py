"""A ScanReport as SARIF 2.1.0, for code-scanning UIs and CI gates.

Severities map to SARIF levels: rewrite-risk -> error, re-tune -> warning, info -> note. Every
catalogue rule is listed in the driver (so a rule with no finding still documents itself);
skipped paths become tool execution notifications; the scorecard and verdicts ride in the
run's property bag. A capped report (caps.py) has as many results as it lists findings; the
property bag and one notification say how many of each rule were left out.

Results carry partialFingerprints (fingerprints.py) and the lines around them as a
contextRegion. A rule's helpUri is its page on the site that serves the SARIF, so it is added
when the SARIF is served (`with_help_uris`), not when the scan stores it; so are the team's
dismissals, as suppressions (`with_suppressions`).
"""

from collections.abc import Mapping
from dataclasses import asdict
from urllib.parse import quote

from advisor.domain.portability.rules import INFO, RE_TUNE, REWRITE_RISK, RULES, Rule
from jobs.domain.codescan.fingerprints import SARIF_FINGERPRINT_KEY
from jobs.domain.codescan.model import Finding, ScanReport

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA_URI = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
TOOL_NAME = "GPU Advisor code scanner"
SOURCE_ROOT = "SRCROOT"
LEVELS = {REWRITE_RISK: "error", RE_TUNE: "warning", INFO: "note"}
_NO_ALTERNATIVE = "—"


def to_sarif(report: ScanReport, *, tool_version: str) -> dict:
    rule_index = {rule_id: index for index, rule_id in enumerate(RULES)}
    return {
        "$schema": SARIF_SCHEMA_URI,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": TOOL_NAME,
                        "version": tool_version,
                        "rules": [_rule(rule) for rule in RULES.values()],
                    }
                },
                "originalUriBaseIds": {
                    SOURCE_ROOT: {"description": {"text": "The root of the scanned upload."}}
                },
                "invocations": [
                    {
                        "executionSuccessful": True,
                        "toolExecutionNotifications": [
                            {
                                "level": "note",
                                "message": {"text": f"{item.path}: not scanned ({item.reason})"},
                                "locations": [_location(item.path)] if item.path else [],
                            }
                            for item in report.skipped
                        ]
                        + _dropped_notifications(report),
                    }
                ],
                "results": [_result(f, rule_index[f.rule_id]) for f in report.findings],
                "properties": {
                    "scorecard": report.scorecard,
                    "verdicts": report.verdicts,
                    "counts": report.counts,
                    "filesScanned": report.files_scanned,
                    "bytesScanned": report.bytes_scanned,
                    "languages": report.languages,
                    "findingsTotal": report.findings_total or len(report.findings),
                    "countsComplete": report.counts_complete,
                    "findingsDroppedByRule": report.findings_dropped_by_rule,
                    "findingsCap": report.findings_cap,
                },
            }
        ],
    }


def _dropped_notifications(report: ScanReport) -> list[dict]:
    dropped = report.findings_dropped_by_rule
    if not dropped:
        return []
    cap = report.findings_cap
    by_rule = ", ".join(f"{rule_id} {count:,}" for rule_id, count in dropped.items())
    text = (
        f"{sum(dropped.values()):,} of {report.findings_total:,} findings are not listed as "
        f"results (at most {cap.get('per_rule', 0):,} per rule and {cap.get('per_scan', 0):,} "
        f"per scan are): {by_rule}. The counts, scorecard and verdicts cover all of them."
    )
    return [{"level": "note", "message": {"text": text}}]


def _rule(rule: Rule) -> dict:
    help_text = (
        "No change needed: a portable-intent API."
        if rule.alternative == _NO_ALTERNATIVE
        else f"Portable alternative: {rule.alternative}"
    )
    return {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.why},
        "help": {"text": help_text},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {"category": rule.category, "severity": rule.severity},
    }


def _location(path: str, finding: Finding | None = None) -> dict:
    physical: dict = {"artifactLocation": {"uri": quote(path), "uriBaseId": SOURCE_ROOT}}
    if finding is not None:
        physical["region"] = {
            "startLine": finding.line,
            "startColumn": finding.column,
            "snippet": {"text": finding.code},
        }
        if finding.snippet:
            physical["contextRegion"] = {
                "startLine": finding.snippet_start_line,
                "endLine": finding.snippet_start_line + finding.snippet.count("\n"),
                "snippet": {"text": finding.snippet},
            }
    return {"physicalLocation": physical}


def _result(finding: Finding, rule_index: int) -> dict:
    message = finding.reason
    if finding.alternative != _NO_ALTERNATIVE:
        message += f" Portable alternative: {finding.alternative}."
    if finding.context:
        message += f" ({finding.context})"
    properties = {k: v for k, v in asdict(finding).items() if k in ("severity", "category")}
    if finding.context:
        properties["context"] = finding.context
    result = {
        "ruleId": finding.rule_id,
        "ruleIndex": rule_index,
        "level": LEVELS[finding.severity],
        "message": {"text": message},
        "locations": [_location(finding.file, finding)],
        "properties": properties,
    }
    if finding.fingerprint:
        result["partialFingerprints"] = {SARIF_FINGERPRINT_KEY: finding.fingerprint}
    return result


def with_help_uris(sarif: dict, help_uris: Mapping[str, str]) -> dict:
    """A copy of a SARIF log whose rules link to their pages: help_uris maps a rule id to
    its page's absolute URL (rules it does not name get no helpUri). Only the path down to
    the rules is copied: the results, megabytes of them, are shared with the original."""
    runs = []
    for run in sarif.get("runs", []):
        driver = run.get("tool", {}).get("driver", {})
        rules = [
            {**rule, "helpUri": help_uris[rule["id"]]} if rule.get("id") in help_uris else rule
            for rule in driver.get("rules", [])
        ]
        runs.append({**run, "tool": {**run.get("tool", {}), "driver": {**driver, "rules": rules}}})
    return {**sarif, "runs": runs}


def with_suppressions(sarif: dict, justifications: Mapping[int, str]) -> dict:
    """A copy of a SARIF log whose results at the given indexes (of the first run's results,
    which are the report's listed findings in order) carry an accepted external suppression
    with the justification: the team dismissed them."""
    if not justifications or not sarif.get("runs"):
        return sarif
    first, *others = sarif["runs"]
    results = [
        {
            **result,
            "suppressions": [
                {"kind": "external", "status": "accepted", "justification": justifications[index]}
            ],
        }
        if index in justifications
        else result
        for index, result in enumerate(first.get("results", []))
    ]
    return {**sarif, "runs": [{**first, "results": results}, *others]}
