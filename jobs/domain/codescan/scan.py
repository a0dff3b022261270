"""scan_paths, scan_archive and scan_uploads: read the upload file by file, scan each once,
then decide.

First pass, per file: candidates, evidence and repo-wide facts (the repo's own macros and
packages, its inline PTX). Second pass (resolve.py): facts applied, findings deduplicated,
then the scorecard and the verdicts. Memory stays bounded: one file's bytes at a time (at most
max_member_bytes), plus the findings.
"""

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from advisor.domain.portability.rules import SEVERITIES
from advisor.domain.portability.scorecard import build_scorecard, build_verdicts
from jobs.domain.codescan.archives import DamagedMember, is_archive, read_archive
from jobs.domain.codescan.candidates import Evidence, FileScan, RepoFacts
from jobs.domain.codescan.disk import read_tree
from jobs.domain.codescan.errors import ScanError
from jobs.domain.codescan.filescan import scan_file
from jobs.domain.codescan.fingerprints import fingerprints
from jobs.domain.codescan.kinds import (
    Kind,
    is_archive_name,
    kind_of,
    refine_kind,
    vendored_reason,
    vendored_root,
)
from jobs.domain.codescan.limits import ScanLimits
from jobs.domain.codescan.members import Budget, Member, format_bytes
from jobs.domain.codescan.model import CATEGORIES, Finding, ScanReport, Skipped
from jobs.domain.codescan.resolve import resolve
from jobs.domain.codescan.text import binary_reason
from jobs.domain.codescan.uploads import Upload, read_uploads

Progress = Callable[[int, str], None]  # (percent done, stage), as the trace analysis reports

DEFAULT_LIMITS = ScanLimits()
_READING_SHARE_PCT = 95
_EVIDENCE_KEPT_PER_QUESTION = 5
_ARCHIVE_MAGIC = (b"PK\x03\x04", b"\x1f\x8b", b"BZh", b"\xfd7zXZ", b"7z\xbc\xaf", b"Rar!")
NESTED_ARCHIVE = "nested archive"


def scan_paths(
    root: Path, *, limits: ScanLimits = DEFAULT_LIMITS, progress: Progress | None = None
) -> ScanReport:
    """Scan a directory (or a single file) on disk, without following links."""
    reporter = _Reporter(progress)
    budget = Budget(limits.max_total_bytes)
    return _scan(read_tree(Path(root), budget=budget, progress=reporter.reading), limits, reporter)


def scan_archive(
    path: Path,
    *,
    limits: ScanLimits = DEFAULT_LIMITS,
    progress: Progress | None = None,
    label: str = "",
) -> ScanReport:
    """Scan a zip or tar(.gz) upload member by member, in memory; nothing is extracted.

    Raises ScanError, naming the archive `label` (its file name when empty), for a file that
    is not such an archive, is damaged, holds more than limits.max_members members,
    overlapping zip entries, or decompresses past limits.max_total_bytes.
    """
    reporter = _Reporter(progress)
    budget = Budget(limits.max_total_bytes)
    members = read_archive(
        Path(path), limits=limits, budget=budget, progress=reporter.reading, label=label
    )
    return _scan(members, limits, reporter)


def scan_uploads(
    uploads: Sequence[Upload],
    *,
    limits: ScanLimits = DEFAULT_LIMITS,
    progress: Progress | None = None,
) -> ScanReport:
    """Scan one job's uploads, reported under their uploaded names: one archive on its own is
    read member by member (scan_archive); otherwise each upload is one file, and every upload
    that is not scanned is in `skipped` with the reason. Raises ScanError as scan_archive."""
    if len(uploads) == 1:
        (upload,) = uploads
        try:
            archive = is_archive(upload.path) or is_archive_name(upload.name)
        except OSError as exc:
            raise ScanError(f"{upload.name}: cannot be read ({exc.strerror})") from None
        if archive:
            return scan_archive(upload.path, limits=limits, progress=progress, label=upload.name)
    reporter = _Reporter(progress)
    budget = Budget(limits.max_total_bytes)
    return _scan(read_uploads(uploads, budget=budget, progress=reporter.reading), limits, reporter)


class _Reporter:
    """Calls progress only when the percentage moves."""

    def __init__(self, progress: Progress | None) -> None:
        self._progress = progress
        self._last_pct = -1

    def reading(self, fraction: float) -> None:
        self.report(int(fraction * _READING_SHARE_PCT), "scanning")

    def report(self, pct: int, stage: str) -> None:
        if self._progress is not None and pct != self._last_pct:
            self._last_pct = pct
            self._progress(pct, stage)


class _Collector:
    """What the first pass keeps: file results with candidates, a little evidence, facts."""

    def __init__(self, limits: ScanLimits) -> None:
        self.limits = limits
        self.facts = RepoFacts()
        self.scans: list[FileScan] = []
        self.evidence: dict[str, list[Evidence]] = {}
        self.skipped: list[Skipped] = []
        self.vendored: set[str] = set()
        self.languages: Counter[str] = Counter()
        self.files_scanned = 0
        self.bytes_scanned = 0
        self.files_ignored = 0
        self.candidates_kept = 0
        self.capped_at: str | None = None  # the first file whose candidates were dropped

    def take(self, member: Member) -> None:
        root = vendored_root(member.path)
        if root is not None:
            if root not in self.vendored:
                self.vendored.add(root)
                self.skipped.append(Skipped(root, vendored_reason(root)))
            return
        if member.path.rpartition("/")[2] == "__init__.py":
            self.facts.init_files.add(member.path)
        kind = kind_of(member.path)
        if kind is None:
            if is_archive_name(member.path):
                self.skipped.append(Skipped(member.path, NESTED_ARCHIVE))
            elif member.uploaded:
                self.skipped.append(Skipped(member.path, _unread_type_reason(member.path)))
            else:
                self.files_ignored += 1
            return
        data = self._read(member)
        if data is None:
            return
        kind = refine_kind(kind, data)
        if kind is Kind.PYTHON:
            self.facts.python_files.add(member.path)
        result = scan_file(kind, member.path, data, self.facts)
        self.files_scanned += 1
        self.bytes_scanned += len(data)
        self.languages[kind.value] += 1
        self._keep_candidates(result)
        for item in result.evidence:
            kept = self.evidence.setdefault(item.question, [])
            if len(kept) < _EVIDENCE_KEPT_PER_QUESTION:
                kept.append(item)

    def _keep_candidates(self, result: FileScan) -> None:
        """Keep at most max_findings candidates: memory stays bounded on a huge tree, and
        the report says where it stopped keeping them."""
        room = self.limits.max_findings - self.candidates_kept
        if len(result.candidates) > room:
            self.capped_at = self.capped_at or result.path
            del result.candidates[room:]
        if result.candidates:
            self.candidates_kept += len(result.candidates)
            self.scans.append(result)

    def _read(self, member: Member) -> bytes | None:
        cap = self.limits.max_member_bytes
        too_big = f"over the member size cap ({format_bytes(cap)})"
        if member.size_bytes > cap:
            self.skipped.append(Skipped(member.path, too_big))
            return None
        try:
            data = member.read(cap)
        except DamagedMember as exc:
            self.skipped.append(Skipped(member.path, f"damaged member ({exc})"))
            return None
        if len(data) > cap:  # the declared size lied
            self.skipped.append(Skipped(member.path, too_big))
            return None
        if reason := binary_reason(data):
            nested = data.startswith(_ARCHIVE_MAGIC)
            self.skipped.append(Skipped(member.path, NESTED_ARCHIVE if nested else reason))
            return None
        return data


def _scan(
    entries: Iterable[Member | Skipped], limits: ScanLimits, reporter: _Reporter
) -> ScanReport:
    collector = _Collector(limits)
    for entry in entries:
        if isinstance(entry, Skipped):
            collector.skipped.append(entry)
        else:
            collector.take(entry)
    reporter.report(_READING_SHARE_PCT, "verdicts")
    resolved = resolve(collector.scans, collector.facts)
    if collector.capped_at is not None:
        reason = (
            f"over the findings ceiling ({limits.max_findings:,}): later findings not counted, "
            "so the counts are lower bounds"
        )
        collector.skipped.append(Skipped(collector.capped_at, reason))
    findings = [r.finding for r in resolved]
    keys = fingerprints((f.rule_id, f.file, f.code) for f in findings)
    findings = [replace(f, fingerprint=key) for f, key in zip(findings, keys, strict=True)]
    evidence = [item for items in collector.evidence.values() for item in items]
    return ScanReport(
        findings=findings,
        scorecard=build_scorecard(resolved, evidence),
        verdicts=build_verdicts(resolved),
        counts=_counts(findings),
        skipped=collector.skipped,
        files_scanned=collector.files_scanned,
        bytes_scanned=collector.bytes_scanned,
        languages=dict(collector.languages),
        files_ignored=collector.files_ignored,
        findings_total=len(findings),
        counts_complete=collector.capped_at is None,
    )


def _unread_type_reason(path: str) -> str:
    name = path.rpartition("/")[2]
    dot = name.rfind(".")
    kind = f"{name[dot:]} files" if dot > 0 else "files without a known name or extension"
    return f"not a type the scanner reads ({kind})"


def _counts(findings: list[Finding]) -> dict[str, dict[str, int]]:
    severity = dict.fromkeys(SEVERITIES, 0)
    category = dict.fromkeys(CATEGORIES, 0)
    for finding in findings:
        severity[finding.severity] += 1
        category[finding.category] += 1
    return {"severity": severity, "category": category}
