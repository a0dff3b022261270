import json
from collections import Counter
from dataclasses import asdict
from typing import Any

from django.core.management.base import BaseCommand

from catalog.services import catalog_load_bundled, unmatched_summary


class Command(BaseCommand):
    help = (
        "Load the bundled GPU specs and cloud price snapshot (catalog/data/). Idempotent: a "
        "second run changes nothing. Prints what was loaded and every offer it could not match."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--json", action="store_true", help="Print the report as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        report = catalog_load_bundled()
        unmatched = unmatched_summary(report.unmatched)
        skipped = Counter(row.reason for row in report.skipped_rows)
        if options["json"]:
            self.stdout.write(
                json.dumps(
                    {
                        "gpus": asdict(report.gpus),
                        "offers": asdict(report.offers),
                        "providers_created": report.providers_created,
                        "quotes_read": report.quotes_read,
                        "unmatched": [
                            {"provider": p, "accelerator": a, "reason": r, "count": c}
                            for p, a, r, c in unmatched
                        ],
                        "unmatched_count": len(report.unmatched),
                        "skipped_rows": dict(skipped),
                        "excluded_files": report.excluded_files,
                    },
                    indent=2,
                )
            )
            return
        gpus, offers = report.gpus, report.offers
        self.stdout.write(
            f"GPUs: {gpus.created} created, {gpus.updated} updated, {gpus.unchanged} unchanged"
        )
        self.stdout.write(
            f"Offers: {offers.created} created, {offers.updated} updated "
            f"({offers.price_changed} price changes), {offers.unchanged} unchanged; "
            f"{offers.history_rows} price history rows written"
        )
        self.stdout.write(f"Price quotes read: {report.quotes_read}")
        for file, reason in report.excluded_files.items():
            self.stdout.write(f"Excluded {file}: {reason}")
        if skipped:
            self.stdout.write("Rows without a usable offer:")
            for reason, count in skipped.most_common():
                self.stdout.write(f"  {count:5d}  {reason}")
        if unmatched:
            self.stdout.write(
                self.style.WARNING(
                    "Offers not loaded because their GPU could not be matched: "
                    f"{len(report.unmatched)}"
                )
            )
            for provider, accelerator, reason, count in unmatched:
                self.stdout.write(f"  {count:5d}  {provider} {accelerator!r}: {reason}")
