"""A ScanReport as SARIF 2.1.0, for code-scanning UIs and CI gates.

Severities map to SARIF levels: rewrite-risk -> error, re-tune -> warning, info -> note. Every
catalogue rule is listed in the driver (so a rule with no finding still documents itself);
skipped paths become tool execution notifications; the scorecard and verdicts ride in the
run's property bag. A capped report (caps.py) has as many results as it lists findings; the
property bag and one notification say how many of each rule were left out.
"""

from dataclasses import asdict
from urllib.parse import quote

from advisor.domain.portability.rules import INFO, RE_TUNE, REWRITE_RISK, RULES, Rule
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
    return {
        "ruleId": finding.rule_id,
        "ruleIndex": rule_index,
        "level": LEVELS[finding.severity],
        "message": {"text": message},
        "locations": [_location(finding.file, finding)],
        "properties": properties,
    }
