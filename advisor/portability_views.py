from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from advisor.api.serializers import PortabilityRequestSerializer
from advisor.domain.portability.questionnaire import (
    COLLECTIVE_LIBRARIES,
    FRAMEWORKS,
    PRECISIONS,
    TARGET_NAMES,
    Collectives,
    Matmuls,
    MemorySizes,
    Precision,
    answer,
)

QUESTIONS = [
    (
        "matmuls",
        "Do your matmuls go through a library, or are they hand-tiled?",
        [
            (Matmuls.LIBRARY, "a library (cuBLAS, torch.matmul, CUTLASS/CK through a config)"),
            (Matmuls.HAND_TILED, "hand-tiled (wmma fragments, mma PTX, CuTe atoms)"),
            (Matmuls.MIXED, "some of each"),
        ],
    ),
    (
        "precision",
        "Is precision a runtime policy or a compile-time constant?",
        [
            (Precision.RUNTIME_POLICY, "a runtime policy (set from configuration)"),
            (Precision.COMPILE_TIME, "compiled in (TF32 types, constants, thresholds)"),
            (Precision.MIXED, "some of each"),
        ],
    ),
    (
        "collectives",
        "Do collectives go through an abstraction?",
        [
            (Collectives.ABSTRACTION, "yes (torch.distributed default backend, deepspeed.comm)"),
            (Collectives.NCCL_DIRECT, "we call NCCL directly"),
            (Collectives.NVLINK_SPECIFIC, "our algorithms assume NVLink/NVSwitch (multicast, P2P)"),
            (Collectives.NONE, "we run on one GPU"),
        ],
    ),
    (
        "memory_sizes",
        "Are memory sizes queried from the device or hard-coded?",
        [
            (MemorySizes.QUERIED, "queried (mem_get_info, device properties)"),
            (MemorySizes.HARD_CODED, "hard-coded (80 GB, A100 peaks, SM counts)"),
            (MemorySizes.MIXED, "some of each"),
        ],
    ),
]
CHOICE_GROUPS = [
    ("frameworks", "What the stack uses", FRAMEWORKS),
    ("collective_libraries", "Collective libraries", COLLECTIVE_LIBRARIES),
    ("precisions", "Precisions relied on", PRECISIONS),
]


def portability_page(request: HttpRequest) -> HttpResponse:
    context = {
        "questions": QUESTIONS,
        "choice_groups": CHOICE_GROUPS,
        "targets": list(TARGET_NAMES.items()),
        "submitted": request.GET,
    }
    status = 200
    if "matmuls" in request.GET:
        data = {key: request.GET.get(key) for key, _, _ in QUESTIONS}
        for key in ("frameworks", "collective_libraries", "precisions", "targets"):
            data[key] = request.GET.getlist(key)
        if not data["targets"]:
            del data["targets"]
        serializer = PortabilityRequestSerializer(data=data)
        if serializer.is_valid():
            context["report"] = answer(serializer.validated_data["answers"]).as_dict()
        else:
            context["errors"] = serializer.errors
            status = 400
    return render(request, "advisor/portability.html", context, status=status)
