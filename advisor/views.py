"""The sizing page: a form validated by the API's own serializer, the ranked answer below it.

GET with query parameters sizes a workload from a shareable URL. The form itself posts (it
can carry a config.json upload, which needs POST and its CSRF token); a posted bundled model
or parameter count is redirected to its GET URL, a posted config.json is answered directly.
With htmx the answer replaces only the results and the form, and the URL follows.
"""

import io
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from django.core.files.uploadedfile import InMemoryUploadedFile
from django.core.files.uploadhandler import FileUploadHandler
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.shortcuts import render
from django.urls import NoReverseMatch, reverse
from django.utils.cache import patch_vary_headers
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_http_methods
from django_htmx.http import push_url
from rest_framework import serializers

from advisor import charts
from advisor.api.serializers import MAX_CONFIG_BYTES, SizingRequestSerializer
from advisor.domain.sizing.models import bundled_models
from advisor.domain.sizing.report import sizing_report
from advisor.services import sizing_advise

GIB = 2**30
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
DEFAULT_MODEL = "llama-3.1-8b"
MEMORY_CHART_FITTING = 12
MEMORY_CHART_REJECTED = 3
TABLE_ROWS = 20

CHOICE_LABELS: dict[str, dict[str, str]] = {
    "task": {
        "inference": "Inference (serving)",
        "lora": "LoRA fine-tune",
        "qlora": "QLoRA fine-tune (4-bit base)",
        "full": "Full fine-tune",
        "pretrain": "Pre-training",
    },
    "weight_dtype": {
        "fp32": "FP32 (4 bytes)",
        "bf16": "BF16 (2 bytes)",
        "fp16": "FP16 (2 bytes)",
        "fp8": "FP8 (1 byte)",
        "int8": "INT8 (1 byte)",
        "int4": "INT4 GPTQ/AWQ (½ byte)",
    },
    "kv_dtype": {
        "fp32": "FP32 (4 bytes)",
        "bf16": "BF16 (2 bytes)",
        "fp16": "FP16 (2 bytes)",
        "fp8": "FP8 (1 byte)",
    },
    "optimizer": {
        "adamw": "AdamW, mixed precision",
        "adamw_bf16": "AdamW, pure BF16",
        "adamw_8bit": "AdamW, 8-bit states",
        "sgd": "SGD with momentum",
        "adafactor": "Adafactor",
    },
    "gradient_checkpointing": {"true": "On", "false": "Off"},
    "flash_attention": {"true": "On", "false": "Off"},
    "zero_stage": {
        "": "Auto (smallest fitting)",
        "0": "0 (plain data parallel)",
        "1": "1 (shard optimizer states)",
        "2": "2 (+ gradients)",
        "3": "3 / FSDP (+ weights)",
    },
    "tensor_parallel": {"1": "1 (none)", "2": "2", "4": "4", "8": "8"},
    "pricing_model": {"on_demand": "On-demand", "spot": "Spot"},
    "goal": {"cheapest": "Cheapest", "fastest": "Fastest"},
}


@dataclass(frozen=True)
class FieldSpec:
    name: str
    label: str
    widget: str = "number"  # number | select | text | textarea | file
    unit: str = ""
    help: str = ""
    placeholder: str = ""


FIELDSETS: tuple[tuple[str, str, tuple[FieldSpec, ...]], ...] = (
    (
        "model",
        "Model",
        (
            FieldSpec("model", "Bundled model", "select"),
            FieldSpec(
                "config",
                "config.json, pasted",
                "textarea",
                help="A Hugging Face config.json object.",
                placeholder='{"model_type": "llama", "hidden_size": 4096, ...}',
            ),
            FieldSpec(
                "config_file",
                "config.json, uploaded",
                "file",
                help="At most 256 KiB; replaces the pasted text.",
            ),
            FieldSpec("params", "Parameters", unit="total", placeholder="e.g. 13000000000"),
            FieldSpec("num_layers", "Layers", unit="optional"),
            FieldSpec("hidden_size", "Hidden size", unit="optional"),
            FieldSpec("num_kv_heads", "KV heads", unit="optional"),
        ),
    ),
    (
        "workload",
        "Workload",
        (
            FieldSpec("task", "Task", "select"),
            FieldSpec(
                "weight_dtype",
                "Weight precision",
                "select",
                help="Serving: stored weights. Training: compute precision.",
            ),
            FieldSpec("context_tokens", "Context length", unit="tokens", help="Prompt + output."),
            FieldSpec(
                "batch_size",
                "Batch size",
                unit="sequences",
                help="Serving: sequences at once. Training: micro-batch per GPU.",
            ),
            FieldSpec("pricing_model", "Pricing", "select"),
            FieldSpec("goal", "Rank by", "select"),
        ),
    ),
    (
        "serving",
        "Serving",
        (
            FieldSpec("kv_dtype", "KV-cache precision", "select"),
            FieldSpec(
                "concurrent_users",
                "Concurrent users",
                unit="users",
                help="Replaces the batch size when given.",
            ),
            FieldSpec("output_tokens", "Output per request", unit="tokens"),
        ),
    ),
    (
        "training",
        "Training",
        (
            FieldSpec("optimizer", "Optimizer", "select"),
            FieldSpec("gradient_checkpointing", "Gradient checkpointing", "select"),
            FieldSpec("flash_attention", "Flash attention", "select"),
            FieldSpec("zero_stage", "ZeRO stage", "select"),
            FieldSpec("tensor_parallel", "Tensor parallel", "select", unit="GPUs"),
            FieldSpec("lora_rank", "LoRA rank", unit="rank"),
            FieldSpec(
                "lora_targets",
                "LoRA targets",
                "text",
                help="Module groups, comma-separated, or all.",
            ),
            FieldSpec(
                "train_tokens",
                "Training tokens",
                unit="tokens",
                help="Empty: 100M to fine-tune, 20 per parameter to pre-train.",
            ),
        ),
    ),
)
FIELD_NAMES = tuple(spec.name for _, _, specs in FIELDSETS for spec in specs)
INPUT_NAMES = ("source", *FIELD_NAMES)


def _natural_key(text: str) -> list:
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", text)]


def _model_choices() -> list[tuple[str, str]]:
    models = bundled_models()
    return sorted(((slug, m.name) for slug, m in models.items()), key=lambda c: _natural_key(c[1]))


def _default_string(value: Any) -> str:
    if value is None or value is serializers.empty:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return str(value)


def _defaults(serializer_fields) -> dict[str, str]:
    values = {name: "" for name in FIELD_NAMES}
    for name in FIELD_NAMES:
        if name in serializer_fields:
            values[name] = _default_string(serializer_fields[name].default)
    values["model"] = DEFAULT_MODEL
    return values


class CappedConfigUpload(FileUploadHandler):
    """Keeps no more of an upload than a config.json may hold (plus one byte, to tell), in
    memory; counts the rest so the page can say how big the file was. Nothing is written to
    disk, however large the upload."""

    def new_file(self, *args, **kwargs) -> None:
        super().new_file(*args, **kwargs)
        self.buffer = io.BytesIO()

    def receive_data_chunk(self, raw_data: bytes, start: int) -> None:
        room = MAX_CONFIG_BYTES + 1 - self.buffer.tell()
        if room > 0:
            self.buffer.write(raw_data[:room])
        return None

    def file_complete(self, file_size: int) -> InMemoryUploadedFile:
        self.buffer.seek(0)
        return InMemoryUploadedFile(
            self.buffer,
            self.field_name,
            self.file_name,
            self.content_type,
            file_size,
            self.charset,
            self.content_type_extra,
        )


def _flatten(messages: Any) -> list[str]:
    """DRF errors as plain strings: lists, and dicts of them (a list field's items)."""
    if isinstance(messages, dict):
        return [text for value in messages.values() for text in _flatten(value)]
    if isinstance(messages, list | tuple):
        return [text for value in messages for text in _flatten(value)]
    return [str(messages)]


@dataclass
class SizingInput:
    """The submitted fields, handed to SizingRequestSerializer (the one set of rules), with its
    errors mapped back to the fields the person filled in."""

    data: QueryDict
    files: Any = None
    errors: dict[str, list[str]] = field(default_factory=dict)
    workload: Any = None
    values: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.serializer_fields = SizingRequestSerializer().fields
        self.values = _defaults(self.serializer_fields)
        for name in INPUT_NAMES:
            if name in self.data and name != "config_file":
                self.values[name] = self.data.get(name, "").strip()
        self.source = self._source()
        self.values["source"] = self.source
        if self.source != "model" and "model" not in self.data:
            self.values["model"] = DEFAULT_MODEL
        self.config_field = "config"

    def _source(self) -> str:
        chosen = self.data.get("source", "").strip()
        if chosen in SOURCE_FIELDS:
            return chosen
        if chosen:
            self.errors["source"] = ["Choose a bundled model, a config.json or a parameter count."]
        upload = self.files.get("config_file") if self.files else None
        if upload or self.data.get("config", "").strip():
            return "config"
        if self.data.get("params", "").strip() and not self.data.get("model", "").strip():
            return "params"
        return "model"

    def _config_text(self) -> str | None:
        upload = self.files.get("config_file") if self.files else None
        if upload:
            self.config_field = "config_file"
            if upload.size > MAX_CONFIG_BYTES:
                self.errors["config_file"] = [
                    f"The file is {upload.size / 1024:,.0f} KiB; a config.json is at most "
                    f"{MAX_CONFIG_BYTES // 1024} KiB."
                ]
                return None
            raw = upload.read(MAX_CONFIG_BYTES + 1)
            try:
                return raw.decode("utf-8-sig")
            except UnicodeDecodeError:
                self.errors["config_file"] = [
                    "This is not a text file: a config.json is UTF-8 JSON."
                ]
                return None
        text = self.data.get("config", "")
        if not text.strip():
            self.errors["config"] = ["Paste a config.json or upload one."]
            return None
        return text

    def payload(self) -> dict[str, Any]:
        payload: dict[str, Any] = {}
        source_only = {name for names in SOURCE_FIELDS.values() for name in names}
        for name in FIELD_NAMES:
            if name in source_only or name not in self.serializer_fields:
                continue
            value = self.values.get(name, "")
            if name == "lora_targets":
                targets = [t for t in re.split(r"[,\s]+", value) if t]
                if targets:
                    payload[name] = targets
            elif value != "":
                payload[name] = value
        if self.source == "model":
            if self.values["model"]:
                payload["model"] = self.values["model"]
            else:
                self.errors["model"] = ["Choose a model."]
        elif self.source == "params":
            for name in SOURCE_FIELDS["params"]:
                if self.values.get(name):
                    payload[name] = self.values[name]
            if "params" not in payload:
                self.errors["params"] = ["Enter the parameter count."]
        else:
            text = self._config_text()
            if text is not None:
                payload["config"] = text
        return payload

    def is_valid(self) -> bool:
        payload = self.payload()
        serializer = SizingRequestSerializer(data=payload)
        if not serializer.is_valid():
            self._map_errors(serializer.errors)
        if self.errors:
            return False
        self.workload = serializer.validated_data["workload"]
        config = serializer.validated_data.get("config")
        if self.source == "config" and isinstance(config, dict):
            # The answer keeps its config: re-submitting the form needs no second upload.
            self.values["config"] = json.dumps(config, indent=2)
        return True

    def _map_errors(self, errors: dict[str, Any]) -> None:
        for name, messages in errors.items():
            texts = _flatten(messages)
            target = name
            if name == "config":
                target = self.config_field
            elif name == "non_field_errors":
                target = "__all__"
            elif name == "model" and self.source != "model":
                # "exactly one of model, config or params": the chosen source is empty, which
                # the source's own message has already said.
                target = SOURCE_FIELDS[self.source][0]
                if target in self.errors or self.config_field in self.errors:
                    continue
            if target in FIELD_NAMES or target == "__all__":
                self.errors.setdefault(target, []).extend(texts)
            else:
                self.errors.setdefault("__all__", []).extend(f"{name}: {t}" for t in texts)

    @property
    def shareable_query(self) -> str | None:
        """The GET query that asks the same question, non-default fields only; None for a
        config.json, which does not belong in a URL."""
        if self.source == "config":
            return None
        defaults = _defaults(self.serializer_fields)
        query: list[tuple[str, str]] = []
        source_only = {name for names in SOURCE_FIELDS.values() for name in names}
        for name in FIELD_NAMES:
            value = self.values.get(name, "")
            if name in SOURCE_FIELDS[self.source]:
                if value:
                    query.append((name, value))
            elif name not in source_only and value != defaults.get(name, "") and value:
                query.append((name, value))
        return urlencode(query)


@dataclass
class BoundField:
    spec: FieldSpec
    value: str
    errors: list[str]
    choices: list[tuple[str, str]] = field(default_factory=list)
    min_value: Any = None
    max_value: Any = None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def id(self) -> str:
        return f"id_{self.spec.name}"


def _bound_fields(sizing: SizingInput) -> list[dict[str, Any]]:
    fields = sizing.serializer_fields
    fieldsets = []
    for key, legend, specs in FIELDSETS:
        bound = []
        for spec in specs:
            serializer_field = fields.get(spec.name)
            choices: list[tuple[str, str]] = []
            if spec.name == "model":
                choices = _model_choices()
            elif spec.widget == "select" and serializer_field is not None:
                labels = CHOICE_LABELS.get(spec.name, {})
                if isinstance(serializer_field, serializers.BooleanField):
                    values = ["true", "false"]
                else:
                    values = [str(v) for v in serializer_field.choices]
                if getattr(serializer_field, "allow_null", False):
                    values = ["", *values]
                choices = [(v, labels.get(v, v)) for v in values]
            bound.append(
                BoundField(
                    spec=spec,
                    value=sizing.values.get(spec.name, ""),
                    errors=sizing.errors.get(spec.name, []),
                    choices=choices,
                    min_value=getattr(serializer_field, "min_value", None),
                    max_value=getattr(serializer_field, "max_value", None),
                )
            )
        fieldsets.append({"key": key, "legend": legend, "fields": bound})
    return fieldsets


# The answer, formatted ----------------------------------------------------------------------


def _fmt(value: float | None, suffix: str = "") -> str:
    if value is None or not math.isfinite(value):
        return "—"
    return charts.format_number(value) + suffix


def _usd(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    if value >= 100:
        return f"${value:,.0f}"
    return f"${value:,.2f}"


def _range_text(values: dict | None, fmt) -> str:
    if not values:
        return ""
    return f"{fmt(values['low'])}–{fmt(values['high'])}"


def _hours(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    if value < 1:
        return f"{value * 60:.0f} min"
    return _fmt(value, " h")


def _region(region: str) -> str:
    """Catalogue regions as people read them: no placeholder, no empty parts."""
    parts = [part.strip() for part in region.split(",") if part.strip()]
    text = ", ".join(parts)
    return "" if text.lower() in {"default", "global", "any"} else text


def _candidate_row(candidate: dict[str, Any], training: bool) -> dict[str, Any]:
    offer = candidate.get("offer")
    try:
        gpu_url = reverse("catalog:gpu-detail", args=[candidate["gpu"]])
    except NoReverseMatch:
        gpu_url = None
    row = {
        "gpu": candidate["gpu"],
        "gpu_url": gpu_url,
        "gpu_name": candidate["gpu_name"],
        "count": candidate["gpu_count"],
        "label": f"{candidate['gpu_count']}× {candidate['gpu_name']}",
        "parallelism": candidate["parallelism"],
        "memory_gib": f"{candidate['memory_per_gpu_gib']:.1f}",
        "usable_gib": f"{candidate['usable_per_gpu_gib']:.1f}",
        "usd_per_hour": _usd(candidate.get("usd_per_hour")),
        "priced": candidate.get("usd_per_hour") is not None,
        "provider": offer["provider_name"] if offer else "",
        "instance": offer["instance_type"] if offer else "",
        "region": _region(offer["region"]) if offer else "",
        "warnings": candidate.get("warnings") or [],
        "reason": candidate["reason"],
    }
    if training:
        hours = candidate.get("training_hours")
        job = candidate.get("usd_per_job")
        row |= {
            "speed": _hours(hours["expected"]) if hours else "—",
            "speed_range": _range_text(hours, _hours),
            "cost": _usd(job["expected"]) if job else "—",
            "cost_range": _range_text(job, _usd),
        }
    else:
        total = candidate.get("decode_tokens_per_s_total")
        per_m = candidate.get("usd_per_million_tokens")
        request = candidate.get("seconds_per_request")
        row |= {
            "speed": _fmt(total["expected"]) if total else "—",
            "speed_range": _range_text(total, _fmt),
            "per_sequence": _fmt(candidate["decode_tokens_per_s_per_sequence"]["expected"])
            if candidate.get("decode_tokens_per_s_per_sequence")
            else "—",
            "seconds_per_request": _fmt(request["expected"], " s") if request else "—",
            "cost": _usd(per_m["expected"]) if per_m else "—",
            "cost_range": _range_text(per_m, _usd),
            "max_users": candidate.get("max_concurrent_users"),
        }
    return row


def _memory_bar(candidate: dict[str, Any]) -> charts.MemoryBar:
    offer = candidate.get("offer")
    note = candidate["parallelism"]
    if offer:
        note += f"; {offer['provider_name']} at {_usd(candidate['usd_per_hour'])}/h"
    if not candidate["fits"]:
        note = candidate["reason"]
    return charts.MemoryBar(
        label=f"{candidate['gpu_name']} ×{candidate['gpu_count']}",
        components={key: value / GIB for key, value in candidate["memory"].items()},
        usable_gib=candidate["usable_per_gpu_gib"],
        fits=candidate["fits"],
        note=note,
    )


def _memory_chart(report: dict[str, Any]) -> str:
    candidates = report["candidates"]
    fitting, seen = [], set()
    for candidate in candidates:
        if candidate["fits"] and candidate["gpu"] not in seen:
            seen.add(candidate["gpu"])
            fitting.append(candidate)
    fitting = fitting[:MEMORY_CHART_FITTING]
    too_big = [
        c for c in candidates if not c["fits"] and c["memory_per_gpu_gib"] > c["usable_per_gpu_gib"]
    ]
    rejected: list[dict[str, Any]] = []
    best = report.get("recommendation")
    if best:
        # Why not fewer of the recommended GPU: its largest count that does not fit.
        same = [c for c in too_big if c["gpu"] == best["gpu"]]
        if same:
            rejected.append(max(same, key=lambda c: c["gpu_count"]))
    limit = MEMORY_CHART_REJECTED if fitting else MEMORY_CHART_FITTING
    fits_somewhere = {c["gpu"] for c in candidates if c["fits"]}
    shown = {c["gpu"] for c in fitting} | {c["gpu"] for c in rejected}
    # GPU types that fit at no count first, then the others; closest to fitting first (the
    # engine's rank order).
    for candidate in sorted(too_big, key=lambda c: c["gpu"] in fits_somewhere):
        if len(rejected) >= limit:
            break
        if candidate["gpu"] not in shown:
            shown.add(candidate["gpu"])
            rejected.append(candidate)
    bars = [_memory_bar(c) for c in fitting + rejected]
    if not bars:
        return ""
    return charts.memory_chart(bars, title="Memory per GPU, by component")


def _cost_chart(report: dict[str, Any], training: bool) -> str:
    points = []
    best = report.get("recommendation")
    for candidate in report["candidates"]:
        if not candidate["fits"] or not candidate.get("offer"):
            continue
        if training:
            x, y = candidate.get("training_hours"), candidate.get("usd_per_job")
        else:
            x, y = (
                candidate.get("decode_tokens_per_s_total"),
                candidate.get("usd_per_million_tokens"),
            )
        if not x or not y:
            continue
        label = f"{candidate['gpu_name']} ×{candidate['gpu_count']}"
        note = (
            f"{_hours(x['expected'])}, {_usd(y['expected'])} per job"
            if training
            else f"{_fmt(x['expected'])} tokens/s, {_usd(y['expected'])} per million tokens"
        ) + f"; {candidate['offer']['provider_name']} at {_usd(candidate['usd_per_hour'])}/h"
        recommended = bool(
            best and best["gpu"] == candidate["gpu"] and best["gpu_count"] == candidate["gpu_count"]
        )
        points.append(
            charts.Point(label, x["expected"], y["expected"], note=note, recommended=recommended)
        )
    if training:
        return charts.scatter_chart(
            points,
            x_label="Training time, hours (expected)",
            y_label="$ per job (expected)",
            higher_x_is_better=False,
            title="Cost against training time",
            y_format=lambda v: "$" + charts.format_number(v),
        )
    return charts.scatter_chart(
        points,
        x_label="Decode throughput, tokens/s over all sequences (expected)",
        y_label="$ per million output tokens (expected)",
        higher_x_is_better=True,
        title="Cost against speed",
        y_format=lambda v: "$" + charts.format_number(v),
        empty_message="No priced candidate generates tokens: nothing to plot.",
    )


def _answer(report: dict[str, Any]) -> dict[str, Any]:
    training = report["workload"]["task"] != "inference"
    candidates = report["candidates"]
    fitting = [_candidate_row(c, training) for c in candidates if c["fits"]]
    rejected = [_candidate_row(c, training) for c in candidates if not c["fits"]]
    best = report.get("recommendation")
    headline = None
    if best:
        row = _candidate_row(best, training)
        where = (
            f" on {row['provider']} at {row['usd_per_hour']}/h"
            if row["priced"]
            else " (no offer in the catalogue at this pricing)"
        )
        headline = {
            "row": row,
            "text": f"{row['label']}{where} — {row['memory_gib']} of {row['usable_gib']} GiB "
            "per GPU",
            "warnings": best.get("warnings") or [],
        }
    workload = report["workload"]
    task = workload["task"]
    return {
        "training": training,
        "task_label": CHOICE_LABELS["task"].get(task, task),
        "model": report["model"],
        "workload": workload,
        "headline": headline,
        "fitting": fitting[:TABLE_ROWS],
        "more_fitting": fitting[TABLE_ROWS:],
        "fitting_count": len(fitting),
        "rejected": rejected,
        "remedies": report["remedies"],
        "assumptions": report["assumptions"],
        "memory_chart": _memory_chart(report),
        "cost_chart": _cost_chart(report, training),
        "train_tokens": workload.get("train_tokens"),
        "pricing_label": CHOICE_LABELS["pricing_model"]
        .get(workload["pricing_model"], workload["pricing_model"])
        .lower(),
    }


# The view -----------------------------------------------------------------------------------


@csrf_exempt
@require_http_methods(["GET", "HEAD", "POST"])
def sizing_page(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        # Before anything reads the body: an upload is kept in memory and capped.
        request.upload_handlers = [CappedConfigUpload(request)]
    return _sizing_page(request)


@csrf_protect
def _sizing_page(request: HttpRequest) -> HttpResponse:
    posted = request.method == "POST"
    data = request.POST if posted else request.GET
    submitted = posted or any(name in request.GET for name in INPUT_NAMES)
    sizing = SizingInput(data, request.FILES if posted else None)
    htmx = bool(getattr(request, "htmx", False)) and not request.htmx.history_restore_request
    context: dict[str, Any] = {"sizing": sizing, "sources": SOURCES, "submitted": submitted}
    status = 200
    if submitted:
        if sizing.is_valid():
            report = sizing_report(sizing_advise(workload=sizing.workload))
            query = sizing.shareable_query
            if posted and query is not None and not htmx:
                url = f"{reverse('advisor:sizing')}?{query}#results"
                return HttpResponseRedirect(url, status=303)
            context["answer"] = _answer(report)
            context["share_url"] = (
                f"{reverse('advisor:sizing')}?{query}" if query is not None else None
            )
        else:
            # 422 for htmx: htmx swaps it in (see the page's htmx-config), while the debug
            # helper of django-htmx would replace the whole page on a 400.
            status = 422 if htmx else 400
    context["fieldsets"] = _bound_fields(sizing)
    context["fields"] = {f.name: f for fs in context["fieldsets"] for f in fs["fields"]}
    context["form_errors"] = sizing.errors.get("__all__", []) + sizing.errors.get("source", [])
    context["error_count"] = sum(len(v) for v in sizing.errors.values())
    template = "advisor/_results.html" if htmx else "advisor/sizing.html"
    response = render(request, template, context, status=status)
    if htmx:
        url = context.get("share_url") if status == 200 else None
        push_url(response, url or False)
    patch_vary_headers(response, ("HX-Request",))
    return response
