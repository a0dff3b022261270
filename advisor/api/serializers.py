"""The sizing request: validated once here for the API, the web form and the CLI."""

import json
from typing import Any

from rest_framework import serializers

from advisor.api.ownership_fields import ownership_field
from advisor.api.rental_fields import RentalAndAnswerFields
from advisor.domain.portability.questionnaire import Answers
from advisor.domain.portability.questions import (
    COLLECTIVE_LIBRARIES,
    FRAMEWORKS,
    PRECISIONS,
    QUESTIONS,
    Collectives,
    Matmuls,
    MemorySizes,
    Precision,
    QuestionId,
    Target,
)
from advisor.domain.sizing.architecture import (
    MAX_PARAMS_TOTAL,
    ModelArchitecture,
    UnsupportedArchitecture,
    architecture_from_config,
    architecture_from_params,
)
from advisor.domain.sizing.bundled_models import (
    bundled_models,
    bundled_slug_for,
    nearest_bundled_slugs,
)
from advisor.domain.sizing.hub_ids import HubRef, InvalidHubId, looks_like_hub_id, parse_hub_ref
from advisor.domain.sizing.precision import Dtype
from advisor.domain.sizing.rental import (
    ANY_PRICING,
    MAX_CLUSTER_GPUS,
    ON_DEMAND,
    PRICING_MODELS,
    Rental,
)
from advisor.domain.sizing.stacks import (
    DEFAULT_STACK_BY_TASK,
    GPU_MEMORY_UTILIZATION_MAX,
    GPU_MEMORY_UTILIZATION_MIN,
    STACKS,
    Checkpointing,
    stacks_for,
)
from advisor.domain.sizing.stored_weights import stored_weights_compare
from advisor.domain.sizing.workload import (
    CONTEXT_TOKENS_CEILING,
    DEFAULT_CONTEXT_TOKENS,
    LONG_CONTEXT_TOKENS,
    LORA_TARGETS_ALL,
    MAX_TRAIN_DAYS,
    Goal,
    Optimizer,
    Task,
    Workload,
)
from advisor.hub import HubError, hub_model_read
from catalog.domain.json_depth import JsonTooDeep, json_loads_limited
from config.api_fields import JsonTypesMixin, KnownFieldsMixin, StringField

MAX_CONFIG_BYTES = 256 * 1024


def _choices(enum) -> list[tuple[str, str]]:
    return [(member.value, member.value) for member in enum]


class FormNullableJSONField(serializers.JSONField):
    """A JSON value; sent as a form field, an empty value is null, as DRF already reads it for
    every other nullable field (DRF's JSONField would try to parse "" as JSON and refuse it)."""

    def get_value(self, dictionary):
        value = super().get_value(dictionary)
        if self.allow_null and getattr(value, "is_json_string", False) and value == "":
            return None
        return value


class ConfigJSONField(FormNullableJSONField):
    """A config.json as an object, or as its text (a JSON string, a form field, the file the
    page or `size` read): the text is decoded here, once, under the one nesting limit."""

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, str):
            return super().to_internal_value(data)
        if len(data.encode()) > MAX_CONFIG_BYTES:
            raise serializers.ValidationError("larger than a config.json can be (256 KiB)")
        try:
            return json_loads_limited(data)
        except JsonTooDeep as error:
            raise serializers.ValidationError(str(error)) from error
        except json.JSONDecodeError as error:
            raise serializers.ValidationError(f"not valid JSON: {error.msg}") from error
        except ValueError as error:  # e.g. an integer of more than 4,300 digits
            raise serializers.ValidationError(f"not valid JSON: {error}") from error


# The advice endpoints' pricing: one named enum in the schema (settings.SPECTACULAR_SETTINGS),
# whichever request serializer carries it.
PRICING_MODEL_CHOICES = [(model, model) for model in (*PRICING_MODELS, ANY_PRICING)]


class SizingRequestSerializer(KnownFieldsMixin, JsonTypesMixin, RentalAndAnswerFields):
    model = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=200,
        help_text=(
            "A bundled model: its slug or its Hugging Face id (GET /api/v1/advice/models lists "
            "them); or any Hugging Face Hub id, `owner/name` or `owner/name@revision`, whose "
            "config.json is read from the Hub."
        ),
    )
    config = ConfigJSONField(
        required=False,
        allow_null=True,
        help_text="A Hugging Face config.json object (or its text), instead of `model`.",
    )
    params = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1_000_000,
        max_value=MAX_PARAMS_TOTAL,
        help_text="A bare parameter count, instead of `model` or `config`.",
    )
    num_layers = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=1000
    )
    hidden_size = serializers.IntegerField(
        required=False, allow_null=True, min_value=64, max_value=131072
    )
    num_kv_heads = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=1024
    )
    task = serializers.ChoiceField(choices=_choices(Task), default=Task.INFERENCE.value)
    weight_dtype = serializers.ChoiceField(
        choices=_choices(Dtype),
        required=False,
        allow_null=True,
        help_text=(
            "Empty: as the checkpoint stores them (its quantization_config), else bf16. Given: "
            "this precision, whatever the checkpoint stores."
        ),
    )
    kv_dtype = serializers.ChoiceField(
        choices=[(d, d) for d in ("fp32", "bf16", "fp16", "fp8")],
        required=False,
        allow_null=True,
        help_text="Empty: the weights' dtype (bf16 for fp8, int8 and int4 weights).",
    )
    batch_size = serializers.IntegerField(default=1, min_value=1, max_value=4096)
    context_tokens = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=CONTEXT_TOKENS_CEILING,
        help_text=(
            f"Empty: {DEFAULT_CONTEXT_TOKENS:,} tokens, or the model's positions when fewer. "
            f"At most the model's positions, or {LONG_CONTEXT_TOKENS:,} for a model built for "
            "fewer (beyond its configured length: flagged)."
        ),
    )
    output_tokens = serializers.IntegerField(default=256, min_value=0, max_value=1_000_000)
    concurrent_users = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=100_000,
        help_text="Serving: users at once (sets batch_size).",
    )
    optimizer = serializers.ChoiceField(choices=_choices(Optimizer), default=Optimizer.ADAMW.value)
    gradient_checkpointing = serializers.BooleanField(default=True)
    flash_attention = serializers.BooleanField(default=True)
    zero_stage = serializers.ChoiceField(
        choices=[(0, 0), (1, 1), (2, 2), (3, 3)],
        required=False,
        allow_null=True,
        help_text="Empty: the smallest stage that fits.",
    )
    tensor_parallel = serializers.ChoiceField(choices=[(1, 1), (2, 2), (4, 4), (8, 8)], default=1)
    lora_rank = serializers.IntegerField(default=16, min_value=1, max_value=4096)
    lora_targets = serializers.ListField(
        child=StringField(max_length=64),
        default=list(LORA_TARGETS_ALL),
        max_length=32,
        allow_empty=False,
    )
    train_tokens = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=10**15
    )
    gpu_count = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=MAX_CLUSTER_GPUS,
        help_text="Also size this many GPUs (at most max_gpus). Across nodes it is priced as "
        "a whole number of one offer's instances (a multiple of its GPUs: 8 for most).",
    )
    train_days = serializers.FloatField(
        required=False,
        allow_null=True,
        min_value=0.001,
        max_value=MAX_TRAIN_DAYS,
        help_text="Training: a deadline in days. The answer's deadline lists, per GPU type and "
        "provider, the smallest cluster that finishes within it, with its time and cost.",
    )
    stack = serializers.ChoiceField(
        choices=[(name, name) for name in STACKS],
        required=False,
        allow_null=True,
        help_text="The serving or training stack. Empty: the task's default. "
        + "; ".join(f"{task}: {', '.join(stacks_for(task))}" for task in DEFAULT_STACK_BY_TASK)
        + " (default first).",
    )
    gpu_memory_utilization = serializers.FloatField(
        required=False,
        allow_null=True,
        min_value=GPU_MEMORY_UTILIZATION_MIN,
        max_value=GPU_MEMORY_UTILIZATION_MAX,
        help_text=(
            "Serving: the stack's memory fraction (vLLM gpu_memory_utilization, SGLang "
            "mem_fraction_static, TensorRT-LLM free_gpu_memory_fraction). Empty: the stack's "
            "default (0.90)."
        ),
    )
    activation_checkpointing = serializers.ChoiceField(
        choices=_choices(Checkpointing),
        required=False,
        allow_null=True,
        help_text=(
            "Training: what each layer keeps for the backward pass (selective: everything but "
            "the attention scores, recomputed). Empty: the stack's granularity when "
            "gradient_checkpointing is on (full; Megatron-LM selective), none when off."
        ),
    )
    optimizer_offload = serializers.BooleanField(
        default=False, help_text="Training: optimizer states on the CPU (stacks that offload)."
    )
    parameter_offload = serializers.BooleanField(
        default=False,
        help_text="Training: parameters and gradients on the CPU too (stacks that offload).",
    )
    activation_offloading = serializers.BooleanField(
        required=False,
        allow_null=True,
        default=None,
        help_text=(
            "Training: what each layer keeps for the backward pass streams to CPU memory "
            "(torchtune enable_activation_offloading; Unsloth's checkpointing). Empty: the "
            "stack's default (on for Unsloth, off elsewhere)."
        ),
    )
    optimizer_in_backward = serializers.BooleanField(
        required=False,
        allow_null=True,
        default=None,
        help_text=(
            "Full fine-tuning: the optimizer steps each parameter as its gradient arrives, so "
            "no full gradient buffer is held (torchtune optimizer_in_bwd). Empty: the stack's "
            "default (on for torchtune)."
        ),
    )
    pricing_model = serializers.ChoiceField(
        choices=PRICING_MODEL_CHOICES,
        default=ON_DEMAND,
        help_text="on_demand, spot, or any: each candidate on the cheaper of the two (its "
        "offer's pricing_model says which).",
    )
    goal = serializers.ChoiceField(choices=_choices(Goal), default=Goal.CHEAPEST.value)
    ownership = ownership_field()

    def validate_model(self, value: str) -> str | HubRef:
        """A bundled slug; a bundled model's Hub id (its bundled config, no request); else a
        Hub id, checked here before anything is asked of the Hub."""
        value = value.strip()
        models = bundled_models()
        if not value or value in models:
            return value
        by_hf_id = {model.hf_id.lower(): slug for slug, model in models.items()}
        if value.lower() in by_hf_id:
            return by_hf_id[value.lower()]
        if not looks_like_hub_id(value):
            slug = bundled_slug_for(value)
            if slug:
                return slug
            nearest = nearest_bundled_slugs(value)
            raise serializers.ValidationError(
                f"{value[:100]!r} is not a bundled model (GET /api/v1/advice/models lists them) "
                "nor a Hugging Face id (owner/name)"
                + (f": did you mean {' or '.join(nearest)}?" if nearest else "")
            )
        try:
            return parse_hub_ref(value)
        except InvalidHubId as error:
            raise serializers.ValidationError(str(error)) from error

    def validate_config(self, value: Any) -> dict | None:
        if value is None:
            return None
        if not isinstance(value, dict):
            raise serializers.ValidationError("must be a JSON object (a config.json)")
        if len(json.dumps(value)) > MAX_CONFIG_BYTES:
            raise serializers.ValidationError("larger than a config.json can be (256 KiB)")
        return value

    def validate(self, attrs: dict) -> dict:
        sources = [name for name in ("model", "config", "params") if attrs.get(name)]
        if len(sources) != 1:
            raise serializers.ValidationError(
                {"model": ["Give exactly one of model, config or params."]}
            )
        notes = []
        source: dict[str, Any] = {"kind": sources[0]}
        try:
            if isinstance(attrs.get("model"), HubRef):
                architecture, source = self._hub_architecture(attrs["model"], notes)
            elif attrs.get("model"):
                bundled = bundled_models()[attrs["model"]]
                architecture = bundled.architecture()
                source = {
                    "kind": "bundled",
                    "slug": bundled.slug,
                    "hf_id": bundled.hf_id,
                    "source_url": bundled.source_url,
                }
            elif attrs.get("config"):
                path = attrs["config"].get("_name_or_path")
                name = path[:100] if isinstance(path, str) and path else "uploaded config"
                architecture = architecture_from_config(attrs["config"], name)
            else:
                architecture = architecture_from_params(
                    attrs["params"],
                    num_layers=attrs.get("num_layers"),
                    hidden_size=attrs.get("hidden_size"),
                    num_kv_heads=attrs.get("num_kv_heads"),
                )
        except UnsupportedArchitecture as error:
            raise serializers.ValidationError({sources[0]: [str(error)]}) from error
        batch = attrs["batch_size"]
        if attrs.get("concurrent_users"):
            batch = attrs["concurrent_users"]
            notes.append(f"{batch} concurrent users, each with one sequence of the context")
        workload = Workload(
            architecture=architecture,
            task=Task(attrs["task"]),
            weight_dtype=Dtype(attrs.get("weight_dtype") or Dtype.BF16.value),
            # A quantised checkpoint is served as stored unless weight_dtype is given.
            weights_as_stored=attrs.get("weight_dtype") is None,
            kv_dtype=Dtype(attrs["kv_dtype"]) if attrs.get("kv_dtype") else None,
            batch_size=batch,
            context_tokens=attrs.get("context_tokens"),
            output_tokens=0 if architecture.encoder_only else attrs["output_tokens"],
            optimizer=Optimizer(attrs["optimizer"]),
            gradient_checkpointing=attrs["gradient_checkpointing"],
            flash_attention=attrs["flash_attention"],
            zero_stage=attrs.get("zero_stage"),
            tensor_parallel=int(attrs["tensor_parallel"]),
            lora_rank=attrs["lora_rank"],
            lora_targets=tuple(attrs["lora_targets"]),
            train_tokens=attrs.get("train_tokens"),
            stack_name=attrs.get("stack"),
            gpu_memory_utilization=attrs.get("gpu_memory_utilization"),
            activation_checkpointing=(
                Checkpointing(attrs["activation_checkpointing"])
                if attrs.get("activation_checkpointing")
                else None
            ),
            optimizer_offload=attrs["optimizer_offload"],
            parameter_offload=attrs["parameter_offload"],
            activation_offloading=attrs.get("activation_offloading"),
            optimizer_in_backward=attrs.get("optimizer_in_backward"),
            pricing_model=attrs["pricing_model"],
            goal=Goal(attrs["goal"]),
            other_stacks=attrs["other_stacks"],
            rental=Rental(
                providers=attrs["providers"],
                exclude_providers=attrs["exclude_providers"],
                regions=attrs["regions"],
                exclude_marketplaces=attrs["exclude_marketplaces"],
                max_gpus=attrs["max_gpus"],
            ),
            gpu_count=attrs.get("gpu_count"),
            train_days=attrs.get("train_days"),
            notes=tuple(notes),
        )
        try:
            workload.validate()
        except ValueError as error:
            message = str(error)
            field = next(
                (
                    name
                    for name in (
                        "lora_targets",
                        "context_tokens",
                        "stack",
                        "gpu_memory_utilization",
                        "optimizer_offload",
                        "activation_offloading",
                        "optimizer_in_backward",
                        "max_gpus",
                        "gpu_count",
                        "train_days",
                    )
                    if message.startswith(name)
                ),
                "task",
            )
            raise serializers.ValidationError({field: [message]}) from error
        attrs["workload"] = workload
        attrs["model_source"] = source
        return attrs

    def _hub_architecture(
        self, ref: HubRef, notes: list[str]
    ) -> tuple[ModelArchitecture, dict[str, Any]]:
        try:
            hub_model = hub_model_read(ref=ref)
        except HubError as error:
            raise serializers.ValidationError({"model": [str(error)]}, code=error.code) from error
        architecture = architecture_from_config(hub_model.config, str(ref))
        source = hub_model.source()
        notes.append(
            f"config.json read from the Hugging Face Hub: {hub_model.repo_id} at commit "
            f"{hub_model.commit}"
        )
        if hub_model.stored_weight_bytes is not None:
            weights = stored_weights_compare(
                architecture, hub_model.config, hub_model.stored_weight_bytes
            )
            source["weights"] = weights.as_dict()
            notes.append(weights.note())
        return architecture, source


def _question_field(question_id: QuestionId) -> serializers.ChoiceField:
    question = QUESTIONS[question_id]
    return serializers.ChoiceField(
        choices=[(str(choice.value), str(choice.value)) for choice in question.choices],
        help_text=question.wording,
    )


class PortabilityRequestSerializer(JsonTypesMixin, serializers.Serializer):
    """The portability questionnaire: the four questions, and what the stack uses."""

    # Field names are the questions' ids.
    matmuls = _question_field(QuestionId.MATMULS)
    precision = _question_field(QuestionId.PRECISION)
    collectives = _question_field(QuestionId.COLLECTIVES)
    memory_sizes = _question_field(QuestionId.MEMORY_SIZES)
    frameworks = serializers.ListField(
        child=serializers.ChoiceField(choices=FRAMEWORKS), default=list, max_length=len(FRAMEWORKS)
    )
    collective_libraries = serializers.ListField(
        child=serializers.ChoiceField(choices=COLLECTIVE_LIBRARIES),
        default=list,
        max_length=len(COLLECTIVE_LIBRARIES),
    )
    precisions = serializers.ListField(
        child=serializers.ChoiceField(choices=PRECISIONS), default=list, max_length=len(PRECISIONS)
    )
    targets = serializers.ListField(
        child=serializers.ChoiceField(choices=_choices(Target)),
        default=[target.value for target in Target],
        allow_empty=False,
        max_length=len(Target),
    )

    def validate(self, attrs: dict) -> dict:
        attrs["answers"] = Answers(
            matmuls=Matmuls(attrs["matmuls"]),
            precision=Precision(attrs["precision"]),
            collectives=Collectives(attrs["collectives"]),
            memory_sizes=MemorySizes(attrs["memory_sizes"]),
            frameworks=tuple(dict.fromkeys(attrs["frameworks"])),
            collective_libraries=tuple(dict.fromkeys(attrs["collective_libraries"])),
            precisions=tuple(dict.fromkeys(attrs["precisions"])),
            targets=tuple(Target(t) for t in dict.fromkeys(attrs["targets"])),
        )
        return attrs
