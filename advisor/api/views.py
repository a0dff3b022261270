from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from advisor.api.serializers import PortabilityRequestSerializer, SizingRequestSerializer
from advisor.domain.planning.ownership import OwnershipInputs
from advisor.domain.portability.questionnaire import answer
from advisor.domain.sizing.bundled_models import bundled_models
from advisor.domain.sizing.report import sizing_report
from advisor.ownership import sizing_rent_vs_buy
from advisor.services import sizing_advise


class SizingView(APIView):
    """Will it fit, how fast, what will it cost, which instance: ranked for every GPU type
    in the catalogue at 1, 2, 4 and 8 GPUs (up to max_gpus; training also on clusters of 16 to
    4,096), priced only where the team can rent (providers, regions, marketplaces); the first
    max_candidates that run, and the rest counted by reason in rejected_summary (listed with
    include_rejected)."""

    permission_classes = [AllowAny]

    @extend_schema(
        request=SizingRequestSerializer,
        responses={200: OpenApiTypes.OBJECT},
        examples=[
            OpenApiExample(
                "Serve Llama 3.1 70B",
                value={
                    "model": "llama-3.1-70b",
                    "task": "inference",
                    "context_tokens": 8192,
                    "concurrent_users": 16,
                },
                request_only=True,
            ),
            OpenApiExample(
                "QLoRA on Llama 3.1 70B, 4k context",
                value={"model": "llama-3.1-70b", "task": "qlora", "context_tokens": 4096},
                request_only=True,
            ),
            OpenApiExample(
                "A Hugging Face Hub model at a pinned revision",
                value={"model": "Qwen/Qwen3-8B@9c925d6", "task": "inference"},
                request_only=True,
            ),
            OpenApiExample(
                "A bare 13B model, full fine-tune on 8 GPUs with ZeRO-3",
                value={
                    "params": 13_000_000_000,
                    "num_layers": 40,
                    "hidden_size": 5120,
                    "task": "full",
                    "zero_stage": 3,
                },
                request_only=True,
            ),
        ],
    )
    def post(self, request: Request) -> Response:
        serializer = SizingRequestSerializer(data=request.data, context={"request": request})
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        result = sizing_advise(workload=data["workload"])
        report = sizing_report(
            result,
            max_candidates=data["max_candidates"],
            include_rejected=data["include_rejected"],
        )
        report["model"]["source"] = serializer.validated_data["model_source"]
        sizing_rent_vs_buy(
            report, workload=data["workload"], inputs=data.get("ownership") or OwnershipInputs()
        )
        return Response(report)


class BundledModelsView(APIView):
    """The bundled well-known models usable as `model` in a sizing request (by slug or by
    hf_id): family, release year, licence and context length from index.json (null where the
    config and card do not say), parameter counts from the engine."""

    permission_classes = [AllowAny]

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request) -> Response:
        rows = []
        for slug, model in bundled_models().items():
            arch = model.architecture()
            rows.append(
                {
                    "slug": slug,
                    "name": model.name,
                    "hf_id": model.hf_id,
                    "source_url": model.source_url,
                    "family": model.family,
                    "release_year": model.release_year,
                    "license": model.license,
                    "context_length": model.context_length,
                    "params_total": arch.params_total,
                    "params_active": arch.params_active,
                }
            )
        return Response({"results": rows})


class PortabilityView(APIView):
    """The portability questionnaire: the four questions (and the stack) in, the scorecard,
    a re-tune or rewrite verdict per target with what decides it, and what to change first."""

    permission_classes = [AllowAny]

    @extend_schema(
        request=PortabilityRequestSerializer,
        responses={200: OpenApiTypes.OBJECT},
        examples=[
            OpenApiExample(
                "A PyTorch stack with hand-tiled attention kernels",
                value={
                    "matmuls": "mixed",
                    "precision": "runtime_policy",
                    "collectives": "abstraction",
                    "memory_sizes": "hard_coded",
                    "frameworks": ["pytorch", "flash_attn", "cuda_cpp"],
                    "collective_libraries": ["nccl"],
                    "precisions": ["bf16", "tf32"],
                    "targets": [
                        "amd_rocm",
                        "intel_oneapi",
                        "google_tpu",
                        "aws_trainium",
                        "intel_gaudi",
                    ],
                },
                request_only=True,
            ),
        ],
    )
    def post(self, request: Request) -> Response:
        serializer = PortabilityRequestSerializer(data=request.data, context={"request": request})
        serializer.is_valid(raise_exception=True)
        return Response(answer(serializer.validated_data["answers"]).as_dict())
