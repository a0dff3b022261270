"""POST /api/v1/advice/capacity: how many of which GPU serve a peak request rate within p95
latency objectives, and the monthly bill. The request is the sizing request's model, stack,
precision and rental fields (SizingRequestSerializer, less what only training or a fixed batch
means) plus the load and the objectives; `manage.py plan` validates through it too."""

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.fields import empty
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from advisor.api.serializers import SizingRequestSerializer
from advisor.domain.planning.capacity import CapacityPlan, Load, Objectives, plan_capacity
from advisor.domain.planning.ownership import OwnershipInputs
from advisor.domain.planning.report import capacity_report
from advisor.domain.planning.schedule import HOURS_PER_DAY
from advisor.domain.sizing.rental import BILLED_PRICING_MODELS, MAX_GPUS
from advisor.domain.sizing.workload import CONTEXT_TOKENS_CEILING, Task
from advisor.ownership import capacity_rent_vs_buy
from advisor.selectors import catalogue_offers_get

# The sizing fields a capacity request leaves out: training settings, and the batch and
# context, which the load sets. Each takes the sizing field's default.
_SIZING_ONLY = (
    "task",
    "batch_size",
    "context_tokens",
    "concurrent_users",
    "optimizer",
    "gradient_checkpointing",
    "zero_stage",
    "tensor_parallel",
    "lora_rank",
    "lora_targets",
    "train_tokens",
    "gpu_count",
    "train_days",
    "activation_checkpointing",
    "optimizer_offload",
    "parameter_offload",
    "activation_offloading",
    "optimizer_in_backward",
    "goal",
)
MAX_REQUESTS_PER_SECOND = 1_000_000
MAX_OBJECTIVE_MS = 86_400_000  # a day
OBJECTIVES = ("ttft_p95_ms", "itl_p95_ms", "e2e_p95_ms")


def _objective(what: str) -> serializers.FloatField:
    return serializers.FloatField(
        required=False,
        allow_null=True,
        min_value=0.001,
        max_value=MAX_OBJECTIVE_MS,
        help_text=f"The {what} 95% of requests must beat, in milliseconds.",
    )


class CapacityRequestSerializer(SizingRequestSerializer):
    unknown_field_hints = {
        name: (
            "A sizing field, not part of a capacity request: a plan serves requests "
            "(inference), and its load sets the batch and the context."
        )
        for name in _SIZING_ONLY
    }
    # A serving replica does not span nodes here: one instance, as before.
    max_gpus = serializers.IntegerField(
        default=MAX_GPUS,
        min_value=1,
        max_value=MAX_GPUS,
        help_text="At most this many GPUs per replica.",
    )
    requests_per_second = serializers.FloatField(
        min_value=0.0001,
        max_value=MAX_REQUESTS_PER_SECOND,
        help_text="Requests per second at peak, all replicas together.",
    )
    average_requests_per_second = serializers.FloatField(
        required=False,
        allow_null=True,
        min_value=0.0001,
        max_value=MAX_REQUESTS_PER_SECOND,
        help_text="The average rate, for the utilisation at it (empty: the peak).",
    )
    hourly_requests_per_second = serializers.ListField(
        child=serializers.FloatField(min_value=0, max_value=MAX_REQUESTS_PER_SECOND),
        min_length=HOURS_PER_DAY,
        max_length=HOURS_PER_DAY,
        required=False,
        allow_null=True,
        help_text=(
            "The rate in each hour of a day, 24 values from midnight, none above the peak: "
            "prices a schedule that follows it (usd_per_month.scheduled) and gives the average."
        ),
    )
    prompt_tokens = serializers.IntegerField(
        min_value=1, max_value=CONTEXT_TOKENS_CEILING, help_text="The mean prompt, in tokens."
    )
    output_tokens = serializers.IntegerField(
        min_value=1, max_value=1_000_000, help_text="The mean answer, in tokens."
    )
    prompt_tokens_p95 = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=CONTEXT_TOKENS_CEILING,
        help_text=(
            "The p95 prompt, in tokens, when known (at least the mean): the objectives are "
            "held for a request this long."
        ),
    )
    output_tokens_p95 = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=1_000_000,
        help_text="The p95 answer, in tokens, when known (at least the mean).",
    )
    ttft_p95_ms = _objective("time to first token")
    itl_p95_ms = _objective("inter-token latency (time between two output tokens)")
    e2e_p95_ms = _objective("end-to-end time (the request's last token)")

    def validate(self, attrs: dict) -> dict:
        prompt, output = attrs["prompt_tokens"], attrs["output_tokens"]
        tails = _tail_lengths(attrs)
        for name in _SIZING_ONLY:
            default = SizingRequestSerializer._declared_fields[name].default
            attrs[name] = None if default is empty else default
        # The model's positions must hold the longest request the load names.
        longest = (tails["prompt_tokens_p95"] or prompt) + (tails["output_tokens_p95"] or output)
        attrs |= {"task": Task.INFERENCE.value, "context_tokens": longest}
        if not any(attrs.get(name) is not None for name in OBJECTIVES):
            raise serializers.ValidationError(
                {
                    "ttft_p95_ms": [
                        "Give at least one objective: ttft_p95_ms, itl_p95_ms or e2e_p95_ms."
                    ]
                }
            )
        average = attrs.get("average_requests_per_second")
        if average is not None and average > attrs["requests_per_second"]:
            raise serializers.ValidationError(
                {"average_requests_per_second": ["The average cannot exceed the peak."]}
            )
        hourly = _hourly_profile(attrs, average)
        try:
            attrs = super().validate(attrs)
        except serializers.ValidationError as error:
            detail = error.detail
            if isinstance(detail, dict) and "context_tokens" in detail:
                field = "prompt_tokens_p95" if tails["prompt_tokens_p95"] else "prompt_tokens"
                detail[field] = detail.pop("context_tokens")
            raise serializers.ValidationError(detail) from error
        if attrs["workload"].architecture.encoder_only:
            raise serializers.ValidationError(
                {"model": ["An encoder-only model generates no tokens: there is nothing to plan."]}
            )
        attrs["load"] = Load(
            attrs["requests_per_second"],
            prompt_tokens=prompt,
            output_tokens=output,
            average_requests_per_second=average,
            hourly_requests_per_second=hourly,
            **tails,
        )
        attrs["objectives"] = Objectives(**{name: attrs.get(name) for name in OBJECTIVES})
        return attrs


def _tail_lengths(attrs: dict) -> dict[str, int | None]:
    """The p95 prompt and answer, each no shorter than its mean."""
    tails = {}
    for name in ("prompt_tokens", "output_tokens"):
        tail = attrs.get(f"{name}_p95")
        if tail is not None and tail < attrs[name]:
            raise serializers.ValidationError(
                {f"{name}_p95": [f"The p95 ({tail:,}) cannot be below the mean ({attrs[name]:,})."]}
            )
        tails[f"{name}_p95"] = tail
    return tails


def _hourly_profile(attrs: dict, average: float | None) -> tuple[float, ...] | None:
    """The 24-hour profile, checked against the peak and the average."""
    hourly = attrs.get("hourly_requests_per_second")
    if hourly is None:
        return None
    peak = attrs["requests_per_second"]
    above = [hour for hour, rate in enumerate(hourly) if rate > peak * (1 + 1e-9)]
    if above:
        raise serializers.ValidationError(
            {
                "hourly_requests_per_second": [
                    f"Hour {above[0]} ({hourly[above[0]]:g} requests/s) is above the peak "
                    f"({peak:g}): the peak is the busiest hour's rate."
                ]
            }
        )
    if not any(hourly):
        raise serializers.ValidationError(
            {"hourly_requests_per_second": ["Every hour is 0: give the rate in each hour."]}
        )
    if average is not None:
        raise serializers.ValidationError(
            {
                "average_requests_per_second": [
                    "Give the average or the 24-hour profile, not both: the profile sets it."
                ]
            }
        )
    return tuple(hourly)


# Left out of the request (and its schema), as a subclass leaves a field out by naming it None.
CapacityRequestSerializer._declared_fields = {
    name: field
    for name, field in CapacityRequestSerializer._declared_fields.items()
    if name not in _SIZING_ONLY
}


def capacity_advise(validated: dict[str, Any]) -> CapacityPlan:
    """The plan over the catalogue, every candidate billed on its on-demand, spot and reserved
    (1 and 3 years, at the hourly equivalent of the term's price) offers."""
    devices, offers = catalogue_offers_get(pricing_models=BILLED_PRICING_MODELS)
    return plan_capacity(
        validated["workload"], validated["load"], validated["objectives"], devices, offers
    )


def capacity_answer(validated: dict[str, Any]) -> dict[str, Any]:
    """The answer's JSON for a validated request."""
    report = capacity_report(
        capacity_advise(validated),
        max_candidates=validated["max_candidates"],
        include_rejected=validated["include_rejected"],
    )
    report["model"]["source"] = validated["model_source"]
    capacity_rent_vs_buy(
        report,
        rental=validated["workload"].rental,
        inputs=validated.get("ownership") or OwnershipInputs(),
    )
    return report


class CapacityView(APIView):
    """How many of which GPU serve a peak request rate within p95 objectives (time to first
    token, inter-token latency, end to end; any of them), and the monthly bill: for every GPU
    type and count the sizing engine runs, the most one replica serves (a queueing model over
    the engine's step times, its assumptions listed), the replicas the peak needs, and the
    bill on demand and on spot; ranked by the cheapest plan that meets the objectives. When
    none does, what_would_meet says what would."""

    permission_classes = [AllowAny]

    @extend_schema(
        request=CapacityRequestSerializer,
        responses={200: OpenApiTypes.OBJECT},
        examples=[
            OpenApiExample(
                "40 requests/s of 2,000-token prompts, first token within 500 ms",
                value={
                    "model": "llama-3.1-8b",
                    "requests_per_second": 40,
                    "average_requests_per_second": 15,
                    "prompt_tokens": 2000,
                    "output_tokens": 300,
                    "ttft_p95_ms": 500,
                },
                request_only=True,
            ),
            OpenApiExample(
                "A chat service on spot: 50 ms between tokens, 20 s end to end",
                value={
                    "model": "llama-3.1-70b",
                    "requests_per_second": 5,
                    "prompt_tokens": 1000,
                    "output_tokens": 500,
                    "itl_p95_ms": 50,
                    "e2e_p95_ms": 20000,
                    "pricing_model": "spot",
                },
                request_only=True,
            ),
        ],
    )
    def post(self, request: Request) -> Response:
        serializer = CapacityRequestSerializer(data=request.data, context={"request": request})
        serializer.is_valid(raise_exception=True)
        return Response(capacity_answer(serializer.validated_data))
