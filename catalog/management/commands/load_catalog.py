import json
from typing import Any

from django.core.management.base import BaseCommand

from catalog.services import catalog_load_bundled
from catalog.services.refresh import CatalogLoadReport

# The short summary lists this many reasons per kind; `-v 2` and `--json` list them all.
TOP_REASONS = 5
OFFER_COUNTS = (
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


def load_document(report: CatalogLoadReport) -> dict[str, Any]:
    """What `--json` prints: the counts, every skipped reason and every unmatched quote."""
    run, gpus, details = report.refresh, report.gpus, report.refresh.details
    quotes = run.accepted + run.unmatched
    return {
        "status": run.status,
        "reason": run.reason,
        "gpus": {"created": gpus.created, "updated": gpus.updated, "unchanged": gpus.unchanged},
        "rows_read": details.get("rows_read", 0),
        "quotes_read": run.seen,
        "offers_loaded": run.accepted,
        "matched_share": round(run.accepted / quotes, 4) if quotes else None,
        "offers": {name: getattr(run, name) for name in OFFER_COUNTS},
        "skipped": [
            {"reason": reason, "count": count} for reason, count in details.get("skipped_rows", [])
        ],
        "unmatched": details.get("unmatched_rows", []),
        "unmatched_by_reason": details.get("unmatched", []),
        "excluded_files": report.excluded_files,
    }


class Command(BaseCommand):
    help = (
        "Load the bundled GPU specs and cloud price snapshot (catalog/data/). Idempotent: a "
        "second run changes nothing, and it never reverts a price a newer refresh wrote. "
        "Prints a short summary with the top reasons rows were skipped or quotes left "
        "unmatched; -v 2 or --json lists every one."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--json",
            action="store_true",
            help="Print the counts, every skipped reason and every unmatched quote as JSON.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        report = catalog_load_bundled()
        document = load_document(report)
        if options["json"]:
            self.stdout.write(json.dumps(document, indent=2))
            return
        self._summary(report, document, full=options["verbosity"] >= 2)

    def _summary(self, report: CatalogLoadReport, document: dict[str, Any], *, full: bool) -> None:
        run, gpus = report.refresh, report.gpus
        self.stdout.write(
            f"GPUs: {gpus.created} created, {gpus.updated} updated, {gpus.unchanged} unchanged"
        )
        if run.status != run.Status.SUCCEEDED:
            self.stdout.write(self.style.ERROR(f"Offers not loaded: {run.reason}"))
            return
        self.stdout.write(
            f"Offers: {run.new} created, {run.changed} price changes, {run.unchanged} unchanged "
            f"({document['rows_read']:,} rows read, {run.seen:,} price quotes, "
            f"{run.accepted:,} matched to a catalogue GPU)"
        )
        if document["matched_share"] is not None:
            self.stdout.write(
                f"Matched: {run.accepted:,} of {run.accepted + run.unmatched:,} GPU quotes "
                f"({document['matched_share']:.1%}); {run.unmatched:,} unmatched, "
                f"{run.rejected:,} rejected as invalid"
            )
        for file, reason in report.excluded_files.items():
            self.stdout.write(f"Excluded {file}: {reason}")
        skipped = document["skipped"]
        if skipped:
            total = sum(entry["count"] for entry in skipped)
            self.stdout.write(f"Rows not loaded (or not as spot): {total:,}, by reason:")
            self._counts([(e["count"], e["reason"]) for e in skipped], full=full)
        unmatched = document["unmatched_by_reason"]
        if unmatched:
            self.stdout.write(
                self.style.WARNING(
                    f"Offers not loaded because their GPU could not be matched: {run.unmatched:,}"
                )
            )
            self._counts(
                [
                    (e["count"], f"{e['provider']} {e['accelerator']!r}: {e['reason']}")
                    for e in unmatched
                ],
                full=full,
            )
        if full:
            for row in document["unmatched"]:
                self.stdout.write(
                    f"  unmatched {row['provider']} {row['instance_type']} {row['region']}"
                    f"{'/' + row['zone'] if row['zone'] else ''} {row['pricing_model']} "
                    f"{row['gpu_count']}x {row['accelerator']!r}: {row['reason']}"
                )
        elif len(skipped) > TOP_REASONS or unmatched:
            self.stdout.write("Every reason and every unmatched quote: load_catalog -v 2 or --json")

    def _counts(self, rows: list[tuple[int, str]], *, full: bool) -> None:
        shown = rows if full else rows[:TOP_REASONS]
        for count, text in shown:
            self.stdout.write(f"  {count:6,d}  {text}")
        if len(rows) > len(shown):
            rest = sum(count for count, _ in rows[len(shown) :])
            self.stdout.write(f"  {rest:6,d}  ({len(rows) - len(shown)} more reasons)")
