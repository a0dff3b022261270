from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from advisor.api.serializers import PortabilityRequestSerializer
from advisor.domain.portability.questionnaire import answer
from advisor.domain.portability.questions import (
    CHOICE_LABELS,
    COLLECTIVE_LIBRARIES,
    FRAMEWORKS,
    PRECISIONS,
    QUESTIONS,
    TARGET_NAMES,
)

CHOICE_GROUPS = [
    (key, legend, [(value, CHOICE_LABELS[value]) for value in values])
    for key, legend, values in (
        ("frameworks", "What the stack uses", FRAMEWORKS),
        ("collective_libraries", "Collective libraries", COLLECTIVE_LIBRARIES),
        ("precisions", "Precisions relied on", PRECISIONS),
    )
]


def portability_page(request: HttpRequest) -> HttpResponse:
    context = {
        "questions": list(QUESTIONS.values()),
        "choice_groups": CHOICE_GROUPS,
        "targets": list(TARGET_NAMES.items()),
        "submitted": request.GET,
    }
    status = 200
    if "matmuls" in request.GET:
        data = {question_id: request.GET.get(question_id) for question_id in QUESTIONS}
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
