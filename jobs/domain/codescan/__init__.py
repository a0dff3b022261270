"""Scan source code for GPU vendor lock-in, by the rules of /shared/portability_rules.md.

Plain Python: the worker runs `scan_archive` in a child process with a memory limit. Uploads
are read member by member in memory and never extracted; everything is size-capped
(ScanLimits). The rules are advisor.domain.portability.rules.RULES; `to_sarif` renders a
report as SARIF 2.1.0.
"""

from advisor.domain.portability.rules import RULES, Rule
from jobs.domain.codescan.errors import ScanError
from jobs.domain.codescan.limits import ScanLimits
from jobs.domain.codescan.model import Finding, ScanReport, Skipped
from jobs.domain.codescan.sarif import to_sarif
from jobs.domain.codescan.scan import scan_archive, scan_paths

__all__ = [
    "RULES",
    "Finding",
    "Rule",
    "ScanError",
    "ScanLimits",
    "ScanReport",
    "Skipped",
    "scan_archive",
    "scan_paths",
    "to_sarif",
]
