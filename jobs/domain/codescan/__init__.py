"""Scan source code for GPU vendor lock-in, by the rules of /shared/portability_rules.md.

Plain Python: the worker runs `scan_uploads` in a child process with a memory limit. Uploads
are read member by member in memory and never extracted; everything is size-capped
(ScanLimits), and a stored report lists a capped number of findings (`cap_findings`). The
rules are advisor.domain.portability.rules.RULES (rule_docs.py adds each rule's page);
`to_sarif` renders a report as SARIF 2.1.0.
"""

from advisor.domain.portability.rules import RULES, Rule
from jobs.domain.codescan.archives import is_archive
from jobs.domain.codescan.caps import FINDINGS_PER_RULE, FINDINGS_PER_SCAN, cap_findings
from jobs.domain.codescan.errors import ScanError
from jobs.domain.codescan.fingerprints import fingerprints
from jobs.domain.codescan.limits import ScanLimits
from jobs.domain.codescan.model import Finding, ScanReport, Skipped
from jobs.domain.codescan.sarif import to_sarif, with_help_uris
from jobs.domain.codescan.scan import scan_archive, scan_paths, scan_uploads
from jobs.domain.codescan.uploads import Upload

__all__ = [
    "FINDINGS_PER_RULE",
    "FINDINGS_PER_SCAN",
    "RULES",
    "Finding",
    "Rule",
    "ScanError",
    "ScanLimits",
    "ScanReport",
    "Skipped",
    "Upload",
    "cap_findings",
    "fingerprints",
    "is_archive",
    "scan_archive",
    "scan_paths",
    "scan_uploads",
    "to_sarif",
    "with_help_uris",
]
