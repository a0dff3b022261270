import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from advisor.services import rightsizing_report
from jobs.domain.traces import TraceError, analyze_traces


class Command(BaseCommand):
    help = (
        "Analyse PyTorch profiler (Kineto) traces now, with the same code the workers run: "
        "where the GPU time went per rank, top kernels, memory against the GPU's capacity."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("files", nargs="+", type=Path)
        parser.add_argument("--json", action="store_true", help="Print the full report as JSON.")

    def handle(self, *args: Any, files: list[Path], **options: Any) -> None:
        missing = [str(path) for path in files if not path.is_file()]
        if missing:
            raise CommandError(f"not a file: {', '.join(missing)}")
        try:
            summary = analyze_traces(
                files, max_decompressed_bytes=settings.JOB_MAX_DECOMPRESSED_BYTES
            )
        except TraceError as error:
            raise CommandError(str(error)) from error
        report = rightsizing_report(summary=asdict(summary), ranks=summary.ranks)
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        gpu = report["gpu"]
        self.stdout.write(
            f"GPU: {gpu['name'] or 'not named'} -> {gpu['catalog_gpu'] or 'no match'}"
        )
        for rank in report["ranks"]:
            self.stdout.write(
                f"  rank {rank['rank']}: compute {rank['compute_pct']:.1f}%, non-compute "
                f"{rank['non_compute_pct']:.1f}%, idle {rank['idle_pct']:.1f}% "
                f"of {rank['kernel_time_us'] / 1000:.1f} ms"
            )
        if report.get("recommendation"):
            self.stdout.write(f"Recommendation: {report['recommendation']}")
