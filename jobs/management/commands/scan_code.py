import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from jobs.domain.codescan import ScanError, is_archive, scan_archive, scan_paths, to_sarif
from jobs.runner import VERSION

SEVERITY_ORDER = ("info", "re-tune", "rewrite-risk")


class Command(BaseCommand):
    help = (
        "Scan a directory, an archive (zip, tar.gz) or a file for GPU vendor lock-in, with the "
        "same scanner the workers run. Exit 0, or 1 with --fail-on when findings reach that "
        "severity: usable as a CI step."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--format", choices=["json", "sarif", "text"], default="text")
        parser.add_argument(
            "--fail-on",
            choices=["rewrite-risk", "re-tune"],
            help="exit 1 when a finding of this severity (or worse) exists",
        )

    def handle(self, *args: Any, path: Path, **options: Any) -> None:
        if not path.exists():
            raise CommandError(f"{path} does not exist")
        try:
            archive = path.is_file() and is_archive(path)
            report = scan_archive(path) if archive else scan_paths(path)
        except ScanError as error:
            raise CommandError(str(error)) from error
        if options["format"] == "sarif":
            self.stdout.write(json.dumps(to_sarif(report, tool_version=VERSION), indent=2))
        elif options["format"] == "json":
            self.stdout.write(json.dumps(asdict(report), indent=2, default=str))
        else:
            self._print_text(report)
        threshold = options["fail_on"]
        if threshold:
            worst = SEVERITY_ORDER.index(threshold)
            if any(SEVERITY_ORDER.index(f.severity) >= worst for f in report.findings):
                sys.exit(1)

    def _print_text(self, report) -> None:
        for finding in report.findings:
            self.stdout.write(
                f"{finding.file}:{finding.line}: {finding.severity} {finding.rule_id} "
                f"{finding.reason}"
            )
        for target, verdict in report.verdicts.items():
            self.stdout.write(f"{target}: {verdict['verdict']}")
        self.stdout.write(
            f"{len(report.findings)} findings in {report.files_scanned} files; "
            f"{len(report.skipped)} skipped"
        )
