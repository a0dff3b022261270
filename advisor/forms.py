"""The sizing form: the page's fields, judged by the API's own SizingRequestSerializer.

The fields carry what was typed and what the page shows beside it (label, unit, help text);
their ranges and choices are read from the serializer's fields, and clean() hands the values
to the serializer, so the page, the API and `manage.py size` refuse the same input with the
same words. The serializer's errors are mapped back to the fields the person filled in.
"""

import json
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from django import forms
from rest_framework import serializers

from advisor.api.serializers import MAX_CONFIG_BYTES, SizingRequestSerializer
from advisor.choice_labels import CHOICE_LABELS
from advisor.domain.sizing.bundled_models import bundled_models
from advisor.domain.sizing.workload import DEFAULT_CONTEXT_TOKENS, Workload

SOURCES = (
    ("model", "Bundled model"),
    ("config", "config.json"),
    ("params", "Parameter count"),
)
SOURCE_FIELDS = {
    "model": ("model",),
    "config": ("config", "config_file"),
    "params": ("params", "num_layers", "hidden_size", "num_kv_heads"),
}
SOURCE_ONLY = frozenset(name for names in SOURCE_FIELDS.values() for name in names)
DEFAULT_MODEL = "llama-3.1-8b"

WIDGETS = {
    "number": forms.NumberInput,
    "select": forms.Select,
    "text": forms.TextInput,
    "textarea": forms.Textarea,
    "file": forms.FileInput,
}


class PageField(forms.Field):
    """A value as typed. It refuses nothing itself (no Django messages beside the
    serializer's); it carries what the page shows, and the serializer's range and choices."""

    def __init__(
        self,
        label: str,
        widget: str = "number",
        *,
        unit: str = "",
        help_text: str = "",
        placeholder: str = "",
        step: str = "1",
    ) -> None:
        super().__init__(required=False, label=label, help_text=help_text, widget=WIDGETS[widget])
        self.unit = unit
        self.placeholder = placeholder
        # A number input's step, and how its bounds are written (whole numbers unless the
        # step is a fraction).
        self.step = step
        self.number_format = "d" if step == "1" else "g"
        self.options: list[tuple[str, str]] = []
        self.suggestions: list[tuple[str, str]] = []  # a text field's <datalist>: value, label
        self.min_value: int | None = None
        self.max_value: int | None = None

    def follow(self, name: str, rule: serializers.Field | None) -> None:
        """Take the range and the choices from the serializer field that judges this one."""
        self.min_value = getattr(rule, "min_value", None)
        self.max_value = getattr(rule, "max_value", None)
        if rule is None or not isinstance(self.widget, forms.Select):
            return
        if isinstance(rule, serializers.BooleanField):
            values = ["true", "false"]
        else:
            values = [str(value) for value in rule.choices]
        if getattr(rule, "allow_null", False):
            values = ["", *values]
        labels = CHOICE_LABELS.get(name, {})
        self.options = [(value, labels.get(value, value)) for value in values]


FIELDSETS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("model", "Model", ("model", "config", "config_file", *SOURCE_FIELDS["params"])),
    (
        "workload",
        "Workload",
        ("task", "stack", "weight_dtype", "context_tokens", "batch_size", "pricing_model", "goal"),
    ),
    (
        "rental",
        "Where you can rent",
        ("providers", "exclude_providers", "regions", "exclude_marketplaces", "max_gpus"),
    ),
    (
        "serving",
        "Serving",
        ("gpu_memory_utilization", "kv_dtype", "concurrent_users", "output_tokens"),
    ),
    (
        "training",
        "Training",
        (
            "optimizer",
            "gradient_checkpointing",
            "activation_checkpointing",
            "flash_attention",
            "zero_stage",
            "tensor_parallel",
            "lora_rank",
            "lora_targets",
            "train_tokens",
            "gpu_count",
            "train_days",
            "optimizer_offload",
            "parameter_offload",
            "activation_offloading",
            "optimizer_in_backward",
        ),
    ),
)
FIELD_NAMES = tuple(name for _, _, names in FIELDSETS for name in names)
# Typed as comma-separated text, sent as lists.
LIST_FIELDS = frozenset({"lora_targets", "providers", "exclude_providers", "regions"})
INPUT_NAMES = ("source", *FIELD_NAMES)


# Token counts people write as 2e12: read as the whole number they are (the docs and `size`
# take them so).
SCIENTIFIC_FIELDS = frozenset({"train_tokens"})


def _whole_number(text: str) -> str:
    """ "2e12" as "2000000000000" where it is a whole number; else the text as typed."""
    try:
        number = float(text)
    except ValueError:
        return text
    return str(int(number)) if number.is_integer() and "e" in text.lower() else text


def _natural_key(text: str) -> list:
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", text)]


def model_suggestions() -> list[tuple[str, str]]:
    """Each bundled model by slug and by Hub id, in name order."""
    models = sorted(bundled_models().values(), key=lambda m: _natural_key(m.name))
    return [(value, m.name) for m in models for value in (m.slug, m.hf_id) if value]


def default_string(value: Any) -> str:
    if value is None or value is serializers.empty:
        return ""
    if callable(value):  # a field's default=list
        value = value()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return str(value)


def flatten_errors(messages: Any) -> list[str]:
    """DRF errors as plain strings: lists, and dicts of them (a list field's items)."""
    if isinstance(messages, dict):
        return [text for value in messages.values() for text in flatten_errors(value)]
    if isinstance(messages, list | tuple):
        return [text for value in messages for text in flatten_errors(value)]
    return [str(messages)]


class SizingForm(forms.Form):
    """Bound to a GET query or a POST (with its config.json upload); unbound, the defaults."""

    source = forms.CharField(required=False)
    model = PageField(
        "Bundled model or Hub id",
        "text",
        help_text="A bundled model, or a Hugging Face id (owner/name, @revision to pin one).",
        placeholder="llama-3.1-8b or Qwen/Qwen3-8B",
    )
    config = PageField(
        "config.json, pasted",
        "textarea",
        help_text="A Hugging Face config.json object.",
        placeholder='{"model_type": "llama", "hidden_size": 4096, ...}',
    )
    config_file = PageField(
        "config.json, uploaded", "file", help_text="At most 256 KiB; replaces the pasted text."
    )
    params = PageField("Parameters", unit="total", placeholder="e.g. 13000000000")
    num_layers = PageField("Layers", unit="optional")
    hidden_size = PageField("Hidden size", unit="optional")
    num_kv_heads = PageField("KV heads", unit="optional")
    task = PageField("Task", "select")
    stack = PageField(
        "Stack",
        "select",
        help_text="What runs it: its memory budget, checkpointing, loss and offload behaviour.",
    )
    gpu_memory_utilization = PageField(
        "GPU memory utilization",
        unit="fraction",
        step="0.01",
        help_text=(
            "vLLM's gpu_memory_utilization: the share of each GPU's memory the server may take "
            "(weights, then the KV cache fills the rest). Empty: the stack's default (0.90)."
        ),
    )
    activation_checkpointing = PageField(
        "Checkpointing granularity",
        "select",
        help_text=(
            "Full: keep each layer's input, recompute the whole layer in the backward pass. "
            "Selective: recompute only attention's cheap, memory-heavy parts."
        ),
    )
    optimizer_offload = PageField("Optimizer offload to CPU", "select")
    parameter_offload = PageField("Parameter offload to CPU", "select")
    activation_offloading = PageField("Activation offload to CPU", "select")
    optimizer_in_backward = PageField(
        "Optimizer step in the backward pass",
        "select",
        help_text=(
            "Update each parameter as soon as its gradient is ready and free the gradient: "
            "no full set of gradients held at once (torchtune's optimizer_in_bwd)."
        ),
    )
    weight_dtype = PageField(
        "Weight precision",
        "select",
        help_text="Serving: stored weights. Training: compute precision.",
    )
    context_tokens = PageField(
        "Context length",
        unit="tokens",
        help_text=(
            f"Prompt + output. Empty: {DEFAULT_CONTEXT_TOKENS:,}, or the model's positions "
            "when fewer."
        ),
    )
    batch_size = PageField(
        "Batch size",
        unit="sequences",
        help_text="Serving: sequences at once. Training: micro-batch per GPU.",
    )
    pricing_model = PageField("Pricing", "select")
    goal = PageField("Rank by", "select")
    providers = PageField(
        "Providers",
        "text",
        help_text="Only these providers' offers, comma-separated keys (aws, gcp, lambda...).",
        placeholder="any",
    )
    exclude_providers = PageField(
        "Not these providers", "text", help_text="Comma-separated provider keys."
    )
    regions = PageField(
        "Regions",
        "text",
        help_text="Region prefixes, comma-separated: us-, europe-, eastus...",
        placeholder="anywhere",
    )
    exclude_marketplaces = PageField(
        "Leave out marketplaces",
        "select",
        help_text="Vast.ai, Hyperbolic: hosts set the prices and the machines vary.",
    )
    max_gpus = PageField(
        "At most",
        unit="GPUs",
        help_text="Up to 8 to serve; up to 4,096 across nodes to train.",
    )
    kv_dtype = PageField("KV-cache precision", "select")
    concurrent_users = PageField(
        "Concurrent users", unit="users", help_text="Replaces the batch size when given."
    )
    output_tokens = PageField("Output per request", unit="tokens")
    optimizer = PageField("Optimizer", "select")
    gradient_checkpointing = PageField(
        "Gradient checkpointing",
        "select",
        help_text="Recompute activations in the backward pass instead of keeping them: less "
        "memory, about a third more compute.",
    )
    flash_attention = PageField("Flash attention", "select")
    zero_stage = PageField(
        "ZeRO stage",
        "select",
        help_text=(
            "How data-parallel GPUs split the training state: 1 the optimizer states, "
            "2 also the gradients, 3 also the weights (FSDP's full shard)."
        ),
    )
    tensor_parallel = PageField("Tensor parallel", "select", unit="GPUs")
    lora_rank = PageField("LoRA rank", unit="rank")
    lora_targets = PageField(
        "LoRA targets", "text", help_text="Module groups, comma-separated, or all."
    )
    train_tokens = PageField(
        "Training tokens",
        unit="tokens",
        help_text="Empty: 100M to fine-tune, 20 per parameter to pre-train.",
    )
    gpu_count = PageField(
        "Also size",
        unit="GPUs",
        help_text="A cluster size to size beside the powers of two (at most the GPUs above).",
    )
    train_days = PageField(
        "Deadline",
        unit="days",
        help_text="The smallest cluster per GPU type and provider that trains within it.",
    )

    def __init__(self, data: Mapping[str, str] | None = None, files: Any = None) -> None:
        self.rules = SizingRequestSerializer().fields
        self.defaults = self._defaults()
        self.submitted = data if data is not None else {}
        self.workload: Workload | None = None
        self.config_field = "config"
        if data is not None:
            # The page shows every field: the defaults, overlaid with what was sent (stripped).
            data = self.defaults | {
                name: data.get(name, "").strip()
                for name in INPUT_NAMES
                if name in data and name != "config_file"
            }
        super().__init__(data, files, initial=self.defaults)
        self.model_source = self._model_source()
        for name in FIELD_NAMES:
            self.fields[name].follow(name, self.rules.get(name))
        self.fields["model"].suggestions = model_suggestions()

    def _defaults(self) -> dict[str, str]:
        values = {
            name: default_string(getattr(self.rules.get(name), "default", None))
            for name in FIELD_NAMES
        }
        values["model"] = DEFAULT_MODEL
        return values

    def _model_source(self) -> str:
        """Where the model comes from: the chosen radio button, else what was filled in."""
        chosen = self.submitted.get("source", "").strip()
        if chosen in SOURCE_FIELDS:
            return chosen
        if self.files.get("config_file") or self.submitted.get("config", "").strip():
            return "config"
        if self.submitted.get("params", "").strip() and not self.submitted.get("model", "").strip():
            return "params"
        return "model"

    def _value(self, name: str) -> str:
        return self.data.get(name, "")

    def clean(self) -> dict[str, Any]:
        chosen = self.submitted.get("source", "").strip()
        if chosen and chosen not in SOURCE_FIELDS:
            self.add_error("source", "Choose a bundled model, a config.json or a parameter count.")
        serializer = SizingRequestSerializer(data=self._payload())
        if not serializer.is_valid():
            self._add_serializer_errors(serializer.errors)
        if self.errors:
            return self.cleaned_data
        self.workload = serializer.validated_data["workload"]
        # Where the architecture came from (bundled copy, Hub commit, config, count), as the
        # API's answer says it.
        self.model_config_source = serializer.validated_data["model_source"]
        config = serializer.validated_data.get("config")
        if self.model_source == "config" and isinstance(config, dict):
            # The answer keeps its config: re-submitting the form needs no second upload.
            self.data = self.data | {"config": json.dumps(config, indent=2)}
        return self.cleaned_data

    def _payload(self) -> dict[str, Any]:
        payload: dict[str, Any] = {}
        for name in FIELD_NAMES:
            if name in SOURCE_ONLY or name not in self.rules:
                continue
            value = self._value(name)
            if name in LIST_FIELDS:
                items = [item for item in re.split(r"[,\s]+", value) if item]
                if items:
                    payload[name] = items
            elif value != "":
                payload[name] = _whole_number(value) if name in SCIENTIFIC_FIELDS else value
        if self.model_source == "model":
            if self._value("model"):
                payload["model"] = self._value("model")
            else:
                self.add_error("model", "Choose a model.")
        elif self.model_source == "params":
            for name in SOURCE_FIELDS["params"]:
                if self._value(name):
                    payload[name] = self._value(name)
            if "params" not in payload:
                self.add_error("params", "Enter the parameter count.")
        else:
            text = self._config_text()
            if text is not None:
                payload["config"] = text
        return payload

    def _config_text(self) -> str | None:
        upload = self.files.get("config_file")
        if upload:
            self.config_field = "config_file"
            if upload.size > MAX_CONFIG_BYTES:
                self.add_error(
                    "config_file",
                    f"The file is {upload.size / 1024:,.0f} KiB; a config.json is at most "
                    f"{MAX_CONFIG_BYTES // 1024} KiB.",
                )
                return None
            raw = upload.read(MAX_CONFIG_BYTES + 1)
            try:
                return raw.decode("utf-8-sig")
            except UnicodeDecodeError:
                self.add_error(
                    "config_file", "This is not a text file: a config.json is UTF-8 JSON."
                )
                return None
        # As sent, unstripped: the serializer parses the text itself.
        text = self.submitted.get("config", "")
        if not text.strip():
            self.add_error("config", "Paste a config.json or upload one.")
            return None
        return text

    def _add_serializer_errors(self, errors: dict[str, Any]) -> None:
        for name, messages in errors.items():
            texts = flatten_errors(messages)
            target: str | None = name
            if name == "config":
                target = self.config_field
            elif name == "non_field_errors":
                target = None
            elif name == "model" and self.model_source != "model":
                # "exactly one of model, config or params": the chosen source is empty, which
                # the source's own message has already said.
                target = SOURCE_FIELDS[self.model_source][0]
                if target in self.errors or self.config_field in self.errors:
                    continue
            if target is not None and target not in FIELD_NAMES:
                texts = [f"{name}: {text}" for text in texts]
                target = None
            for text in texts:
                self.add_error(target, text)

    @property
    def page_errors(self) -> list[str]:
        """The errors that belong to no one field: shown above the form."""
        return [*self.non_field_errors(), *self.errors.get("source", [])]

    @property
    def error_count(self) -> int:
        return sum(len(messages) for messages in self.errors.values())

    def fieldsets(self) -> list[dict[str, Any]]:
        return [
            {"key": key, "legend": legend, "fields": [self[name] for name in names]}
            for key, legend, names in FIELDSETS
        ]

    @property
    def shareable_query(self) -> str | None:
        """The GET query that asks the same question, non-default fields only; None for a
        config.json, which does not belong in a URL."""
        if self.model_source == "config":
            return None
        query: list[tuple[str, str]] = []
        for name in FIELD_NAMES:
            value = self._value(name)
            if name in SOURCE_FIELDS[self.model_source]:
                if value:
                    query.append((name, value))
            elif name not in SOURCE_ONLY and value and value != self.defaults.get(name, ""):
                query.append((name, value))
        return urlencode(query)
