"""The capacity-planning form: the /plan/ page's fields, judged by the capacity API's own
CapacityRequestSerializer (as the sizing form is by the sizing serializer), so the page, the
API and `manage.py plan` refuse the same input with the same words.

The page asks by GET (nothing is uploaded), so its URL is the link to its answer. The model is
a bundled name or a Hub id; a config.json or a bare parameter count goes through the API or
`manage.py plan`.
"""

import re
from collections.abc import Mapping
from typing import Any

from django import forms

from advisor.api.capacity import CapacityRequestSerializer
from advisor.forms import (
    DEFAULT_MODEL,
    PageField,
    default_string,
    flatten_errors,
    model_suggestions,
)

FIELDSETS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("model", "Model and stack", ("model", "stack", "weight_dtype", "kv_dtype")),
    (
        "load",
        "Load",
        (
            "requests_per_second",
            "average_requests_per_second",
            "hourly_requests_per_second",
            "prompt_tokens",
            "output_tokens",
            "prompt_tokens_p95",
            "output_tokens_p95",
        ),
    ),
    ("objectives", "Objectives (p95)", ("ttft_p95_ms", "itl_p95_ms", "e2e_p95_ms")),
    (
        "rental",
        "Where you can rent",
        (
            "pricing_model",
            "providers",
            "exclude_providers",
            "regions",
            "exclude_marketplaces",
            "max_gpus",
        ),
    ),
)
FIELD_NAMES = tuple(name for _, _, names in FIELDSETS for name in names)
LIST_FIELDS = frozenset({"providers", "exclude_providers", "regions", "hourly_requests_per_second"})
# What an empty page shows: the question the capacity docs open with.
EXAMPLE = {
    "model": DEFAULT_MODEL,
    "requests_per_second": "40",
    "prompt_tokens": "2000",
    "output_tokens": "300",
    "ttft_p95_ms": "500",
}


class PlanForm(forms.Form):
    """Bound to a GET query; unbound, the example question."""

    model = PageField(
        "Bundled model or Hub id",
        "text",
        help_text="A bundled model, or a Hugging Face id (owner/name).",
        placeholder="llama-3.1-8b",
    )
    stack = PageField("Stack", "select")
    weight_dtype = PageField("Weight precision", "select")
    kv_dtype = PageField("KV-cache precision", "select")
    requests_per_second = PageField(
        "Peak rate", unit="requests/s", step="any", help_text="All replicas together."
    )
    average_requests_per_second = PageField(
        "Average rate",
        unit="requests/s",
        step="any",
        help_text="For the utilisation at it. Empty: the profile's mean, else the peak.",
    )
    hourly_requests_per_second = PageField(
        "24-hour profile",
        "text",
        unit="requests/s",
        help_text=(
            "Optional: the rate in each hour from midnight, 24 values, comma-separated: "
            "prices a schedule with replicas per hour."
        ),
        placeholder="5, 4, 3, ... 24 values",
    )
    prompt_tokens = PageField("Prompt", unit="tokens, mean")
    output_tokens = PageField("Answer", unit="tokens, mean")
    prompt_tokens_p95 = PageField(
        "Prompt, p95",
        unit="tokens",
        help_text="Optional: the objectives are then held for a prompt this long.",
    )
    output_tokens_p95 = PageField("Answer, p95", unit="tokens", help_text="Optional.")
    ttft_p95_ms = PageField(
        "Time to first token", unit="ms", step="any", help_text="95% of requests within it."
    )
    itl_p95_ms = PageField(
        "Inter-token latency", unit="ms", step="any", help_text="Time between two output tokens."
    )
    e2e_p95_ms = PageField("End to end", unit="ms", step="any", help_text="The last token.")
    pricing_model = PageField(
        "Rank by the bill",
        "select",
        help_text="Any: the cheapest way to pay that is offered (reserved and schedule too).",
    )
    providers = PageField(
        "Providers", "text", help_text="Comma-separated provider keys.", placeholder="any"
    )
    exclude_providers = PageField("Not these providers", "text")
    regions = PageField(
        "Regions", "text", help_text="Region prefixes: us-, europe-...", placeholder="anywhere"
    )
    exclude_marketplaces = PageField("Leave out marketplaces", "select")
    max_gpus = PageField("At most", unit="GPUs per replica")

    def __init__(self, data: Mapping[str, str] | None = None) -> None:
        self.rules = CapacityRequestSerializer().fields
        self.defaults = {
            name: default_string(getattr(self.rules.get(name), "default", None))
            for name in FIELD_NAMES
        } | EXAMPLE
        self.validated: dict[str, Any] | None = None
        if data is not None:
            data = {name: data.get(name, "").strip() for name in FIELD_NAMES}
        super().__init__(data, initial=self.defaults)
        for name in FIELD_NAMES:
            self.fields[name].follow(name, self.rules.get(name))
        self.fields["model"].suggestions = model_suggestions()

    def clean(self) -> dict[str, Any]:
        payload: dict[str, Any] = {}
        for name in FIELD_NAMES:
            value = self.data.get(name, "")
            if name in LIST_FIELDS:
                items = [item for item in re.split(r"[,\s]+", value) if item]
                if items:
                    payload[name] = items
            elif value != "":
                payload[name] = value
        if "model" not in payload:
            self.add_error("model", "Choose a model.")
            return self.cleaned_data
        serializer = CapacityRequestSerializer(data=payload)
        if not serializer.is_valid():
            for name, messages in serializer.errors.items():
                target = name if name in FIELD_NAMES else None
                for text in flatten_errors(messages):
                    self.add_error(target, text if target else f"{name}: {text}")
            return self.cleaned_data
        self.validated = serializer.validated_data
        return self.cleaned_data

    @property
    def error_count(self) -> int:
        return sum(len(messages) for messages in self.errors.values())

    def fieldsets(self) -> list[dict[str, Any]]:
        return [
            {"key": key, "legend": legend, "fields": [self[name] for name in names]}
            for key, legend, names in FIELDSETS
        ]
