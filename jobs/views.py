from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from accounts.scoping import request_active_team, request_team_ids
from jobs.charts import time_breakdown_svg
from jobs.forms import TraceUploadForm
from jobs.models import Job, JobKind
from jobs.services import job_submit


def _team_jobs(request: HttpRequest) -> QuerySet[Job]:
    return Job.objects.filter(team_id__in=request_team_ids(request)).prefetch_related("files")


@login_required
def job_list_page(request: HttpRequest) -> HttpResponse:
    return render(request, "jobs/job_list.html", {"jobs": _team_jobs(request)[:100]})


@login_required
def job_new_page(request: HttpRequest) -> HttpResponse:
    form = (
        TraceUploadForm(request.POST, request.FILES)
        if request.method == "POST"
        else TraceUploadForm()
    )
    if request.method == "POST" and form.is_valid():
        try:
            team = request_active_team(request)
        except PermissionDenied as error:
            form.add_error(None, str(error))
        else:
            job = job_submit(
                team=team,
                user=request.user,
                kind=JobKind.TRACE,
                uploads=form.cleaned_data["files"],
            )
            return redirect(job)
    return render(request, "jobs/job_new.html", {"form": form}, status=400 if form.errors else 200)


@login_required
def job_detail_page(request: HttpRequest, public_id: str) -> HttpResponse:
    job = get_object_or_404(_team_jobs(request), public_id=public_id)
    context = {"job": job}
    if job.report:
        context["time_chart"] = time_breakdown_svg(job.report.get("ranks", []))
    if request.htmx and request.GET.get("fragment") == "progress":
        if job.finished:
            # Done: reload the whole page so the report renders.
            response = HttpResponse(status=204)
            response["HX-Refresh"] = "true"
            return response
        return render(request, "jobs/_progress.html", context)
    return render(request, "jobs/job_detail.html", context)
