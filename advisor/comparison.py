"""Configurations of one sizing answer side by side: the key a row is picked by (stable across
page loads, so the comparison has a shareable URL), and the comparison table's fields."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

COMPARE_MIN = 2
COMPARE_MAX = 3

# (label, the candidate row's key, the row's range key or ""), in the order the table shows.
TRAINING_FIELDS = (
    ("Parallelism", "parallelism", ""),
    ("Memory / usable GiB per GPU", "memory_of_usable", ""),
    ("Training time", "speed", "speed_range"),
    ("MFU (6·N·D)", "mfu", "mfu_range"),
    ("$/h", "usd_per_hour", ""),
    ("$ per job", "cost", "cost_range"),
    ("Provider · instance", "where", ""),
    ("Price", "price_age", ""),
)
SERVING_FIELDS = (
    ("Parallelism", "parallelism", ""),
    ("Memory / usable GiB per GPU", "memory_of_usable", ""),
    ("Output tokens/s (prefill included)", "speed", "speed_range"),
    ("Decode phase tokens/s", "decode_speed", ""),
    ("First token", "first_token", "first_token_range"),
    ("Per request", "seconds_per_request", ""),
    ("$/h", "usd_per_hour", ""),
    ("$ per M tokens", "cost", "cost_range"),
    ("Max users at context", "max_users", ""),
    ("Provider · instance", "where", ""),
    ("Price", "price_age", ""),
)


def comparison_key(candidate: dict[str, Any]) -> str:
    """GPU, count, layout and offer: what tells two configurations of one answer apart, in
    URL-safe characters ("~" never occurs in a GPU key, provider or instance name)."""
    offer = candidate.get("offer")
    where = (
        [offer["provider"], offer["instance_type"], offer["region"], offer["pricing_model"]]
        if offer
        else ["none"]
    )
    layout = [f"tp{candidate['tensor_parallel']}", f"z{candidate['zero_stage']}"]
    return "~".join([candidate["gpu"], str(candidate["gpu_count"]), *layout, *where])


@dataclass(frozen=True)
class Comparison:
    columns: list[dict[str, Any]]  # the chosen candidate rows, in the order they were picked
    fields: list[dict[str, Any]]  # {"label", "cells": [(value, range) per column]}
    problems: list[str]


def compared(rows: Sequence[dict[str, Any]], keys: Sequence[str], training: bool) -> Comparison:
    """The rows `keys` pick (each once), with what keeps them from being compared."""
    wanted = list(dict.fromkeys(keys))
    by_key = {row["compare_key"]: row for row in rows}
    columns = [by_key[key] for key in wanted if key in by_key]
    problems = []
    missing = len(wanted) - len(columns)
    if missing:
        problems.append(
            f"{missing} of the configurations to compare {'is' if missing == 1 else 'are'} not "
            "in this answer any more (a price or an offer changed): pick them again below."
        )
    if len(columns) > COMPARE_MAX:
        problems.append(f"At most {COMPARE_MAX} configurations side by side: the first shown.")
        columns = columns[:COMPARE_MAX]
    if len(columns) < COMPARE_MIN:
        return Comparison([], [], [*problems, f"Pick {COMPARE_MIN} or {COMPARE_MAX} to compare."])
    fields = []
    for label, key, range_key in TRAINING_FIELDS if training else SERVING_FIELDS:
        cells = [
            (_shown(row.get(key)), row.get(range_key, "") if range_key else "") for row in columns
        ]
        fields.append({"label": label, "cells": cells})
    return Comparison(columns, fields, problems)


def _shown(value: Any) -> str:
    if value is None or value == "":
        return "—"
    return f"{value:,}" if isinstance(value, int) else str(value)
