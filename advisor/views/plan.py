"""The capacity-planning page: the form (judged by the capacity API's serializer) and, once
asked, the plan: its bills, a chart of every candidate's bill against the objective, the
replicas per hour, and why each other candidate costs more or misses."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from advisor.api.capacity import capacity_answer
from advisor.plan_form import FIELD_NAMES, PlanForm
from advisor.plan_presenter import plan_context


@require_http_methods(["GET", "HEAD"])
def plan_page(request: HttpRequest) -> HttpResponse:
    submitted = any(name in request.GET for name in FIELD_NAMES)
    form = PlanForm(request.GET if submitted else None)
    context = {"form": form, "submitted": submitted}
    status = 200
    if submitted and form.is_valid() and form.validated is not None:
        report = capacity_answer(form.validated | {"max_candidates": 0, "include_rejected": False})
        context["answer"] = plan_context(report)
    elif submitted:
        status = 400
    return render(request, "advisor/plan.html", context, status=status)
