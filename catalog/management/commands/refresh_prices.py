from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from catalog.feeds.http import FeedError
from catalog.models import PriceSource
from catalog.services import RefreshAlreadyRunning, price_refresh, price_source_fetcher

COUNTS = (
    "seen",
    "accepted",
    "new",
    "changed",
    "unchanged",
    "stale",
    "quarantined",
    "rejected",
    "unmatched",
)


class Command(BaseCommand):
    help = "Refresh prices from one source now, with the same code the scheduled task runs."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--source",
            required=True,
            choices=[PriceSource.GPUHUNT, PriceSource.AZURE, PriceSource.SKYPILOT, PriceSource.CSV],
        )
        parser.add_argument("--url", help="Read the feed from here instead of the setting.")
        parser.add_argument("--file", type=Path, help="The CSV file (with --source csv).")

    def handle(
        self, *args: Any, source: str, url: str | None, file: Path | None, **options
    ) -> None:
        if source == PriceSource.CSV and not file:
            raise CommandError("--source csv needs --file")
        try:
            if file:
                with file.open(newline="", encoding="utf-8") as lines:
                    run = price_refresh(
                        source=source,
                        fetch=price_source_fetcher(source, lines=list(lines)),
                        triggered_by="refresh_prices",
                    )
            else:
                run = price_refresh(
                    source=source,
                    fetch=price_source_fetcher(source, url=url),
                    triggered_by="refresh_prices",
                )
        except RefreshAlreadyRunning as error:
            raise CommandError(str(error)) from error
        except (FeedError, OSError, UnicodeDecodeError) as error:
            raise CommandError(f"{source} refresh failed, no price changed: {error}") from error
        counts = ", ".join(f"{name} {getattr(run, name)}" for name in COUNTS)
        if run.status != run.Status.SUCCEEDED:
            raise CommandError(
                f"{source} refresh failed, no price changed: {run.reason} ({counts})"
            )
        self.stdout.write(self.style.SUCCESS(f"{source} refresh succeeded: {counts}"))
