"""Scheduled price refreshes: one task per source, run by Celery beat (schedules in the admin).

Retries only on transient network trouble, with backoff; a lock in the database (one running
refresh per source) makes a second, overlapping run a no-op.
"""

import logging

from celery import shared_task

from catalog.feeds.http import TransientFeedError
from catalog.models import PriceSource
from catalog.services import RefreshAlreadyRunning, price_refresh, price_source_fetcher

logger = logging.getLogger(__name__)


@shared_task(
    autoretry_for=(TransientFeedError,),
    retry_backoff=60,
    retry_backoff_max=1800,
    retry_jitter=True,
    max_retries=3,
)
def refresh_prices(source: str, triggered_by: str = "schedule") -> dict:
    if source not in {PriceSource.GPUHUNT, PriceSource.AZURE, PriceSource.SKYPILOT}:
        raise ValueError(f"{source!r} is not a scheduled price source")
    try:
        run = price_refresh(
            source=source, fetch=price_source_fetcher(source), triggered_by=triggered_by
        )
    except RefreshAlreadyRunning as skipped:
        logger.info("%s", skipped)
        return {"source": source, "status": "skipped", "reason": str(skipped)}
    return {"source": source, "status": run.status, "refresh_id": run.pk, "reason": run.reason}
