import json
from typing import Any

from django.core.management.base import BaseCommand

from catalog.services import catalog_load_bundled


class Command(BaseCommand):
    help = (
        "Load the bundled GPU specs and cloud price snapshot (catalog/data/). Idempotent: a "
        "second run changes nothing, and it never reverts a price a newer refresh wrote. "
        "Prints what was loaded and every offer it could not match."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--json", action="store_true", help="Print the report as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        report = catalog_load_bundled()
        run, gpus = report.refresh, report.gpus
        if options["json"]:
            self.stdout.write(
                json.dumps(
                    {
                        "gpus": {
                            "created": gpus.created,
                            "updated": gpus.updated,
                            "unchanged": gpus.unchanged,
                        },
                        "status": run.status,
                        "reason": run.reason,
                        "offers": {
                            name: getattr(run, name)
                            for name in (
                                "seen",
                                "accepted",
                                "new",
                                "changed",
                                "unchanged",
                                "quarantined",
                                "rejected",
                                "unmatched",
                                "stale",
                            )
                        },
                        "unmatched": run.details.get("unmatched", []),
                        "skipped_rows": dict(run.details.get("skipped_rows", [])),
                        "excluded_files": report.excluded_files,
                    },
                    indent=2,
                )
            )
            return
        self.stdout.write(
            f"GPUs: {gpus.created} created, {gpus.updated} updated, {gpus.unchanged} unchanged"
        )
        if run.status != run.Status.SUCCEEDED:
            self.stdout.write(self.style.ERROR(f"Offers not loaded: {run.reason}"))
            return
        self.stdout.write(
            f"Offers: {run.new} created, {run.changed} price changes, {run.unchanged} unchanged "
            f"({run.seen} price quotes read, {run.accepted} matched to a catalogue GPU)"
        )
        for file, reason in report.excluded_files.items():
            self.stdout.write(f"Excluded {file}: {reason}")
        skipped = run.details.get("skipped_rows", [])
        if skipped:
            self.stdout.write("Rows without a usable offer:")
            for reason, count in skipped:
                self.stdout.write(f"  {count:5d}  {reason}")
        unmatched = run.details.get("unmatched", [])
        if unmatched:
            self.stdout.write(
                self.style.WARNING(
                    f"Offers not loaded because their GPU could not be matched: {run.unmatched}"
                )
            )
            for row in unmatched:
                self.stdout.write(
                    f"  {row['count']:5d}  {row['provider']} "
                    f"{row['accelerator']!r}: {row['reason']}"
                )
