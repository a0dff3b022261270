"""A sizing answer downloaded from the page: the whole report as JSON (what the API returns),
or its candidates as CSV, one row per GPU type and count, for a spreadsheet."""

import csv
import io
import json
from typing import Any

from django.http import HttpResponse

DOWNLOAD_FORMATS = ("json", "csv")
CSV_COLUMNS = (
    "gpu",
    "gpu_name",
    "gpu_count",
    "fits",
    "reason",
    "parallelism",
    "memory_per_gpu_gib",
    "usable_per_gpu_gib",
    "provider",
    "instance_type",
    "region",
    "pricing_model",
    "usd_per_hour",
    "price_observed_at",
    "output_tokens_per_s_total",
    "time_to_first_token_s",
    "usd_per_million_tokens",
    "training_hours",
    "usd_per_job",
)


def _expected(value: dict | None) -> Any:
    return value["expected"] if value else None


def _csv_row(candidate: dict[str, Any]) -> dict[str, Any]:
    offer = candidate.get("offer") or {}
    return {
        **{key: candidate.get(key) for key in CSV_COLUMNS if key in candidate},
        **{key: offer.get(key) for key in ("provider", "instance_type", "region")},
        "pricing_model": offer.get("pricing_model"),
        "price_observed_at": offer.get("price_observed_at"),
        "output_tokens_per_s_total": _expected(candidate.get("output_tokens_per_s_total")),
        "time_to_first_token_s": _expected(candidate.get("time_to_first_token_seconds")),
        "usd_per_million_tokens": _expected(candidate.get("usd_per_million_tokens")),
        "training_hours": _expected(candidate.get("training_hours")),
        "usd_per_job": _expected(candidate.get("usd_per_job")),
    }


def answer_download(report: dict[str, Any], file_format: str, name: str) -> HttpResponse:
    """The report as an attachment named `name`.json or `name`.csv."""
    if file_format == "json":
        body = json.dumps(report, indent=1, default=str)
        response = HttpResponse(body, content_type="application/json")
    else:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        for candidate in report["candidates"]:
            writer.writerow(_csv_row(candidate))
        response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}.{file_format}"'
    return response
