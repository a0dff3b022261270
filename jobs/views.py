import uuid

from django.contrib.auth.decorators import login_required
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from accounts.scoping import request_active_team, request_team_ids
from jobs.charts import series_svg, time_breakdown_svg
from jobs.codescan_views import codescan_report_context, served_sarif
from jobs.domain.traces.compare import compare_jobs
from jobs.forms import CodeUploadForm, TraceUploadForm
from jobs.models import Job, JobKind, JobStatus
from jobs.reports import trace_ranks, trace_report_context
from jobs.services import job_submit


def _team_jobs(request: HttpRequest) -> QuerySet[Job]:
    return Job.objects.filter(team_id__in=request_team_ids(request)).prefetch_related("files")


@login_required
def job_list_page(request: HttpRequest) -> HttpResponse:
    # The list shows no report, and one report can be megabytes: never load it here.
    jobs = _team_jobs(request).defer("report")[:100]
    return render(request, "jobs/job_list.html", {"jobs": jobs})


def _upload_page(request: HttpRequest, form_class, kind: str, template: str) -> HttpResponse:
    # No team, nowhere to put the job: a 403 page saying whom to ask, before any upload.
    team = request_active_team(request)
    form = form_class(request.POST, request.FILES) if request.method == "POST" else form_class()
    if request.method == "POST" and form.is_valid():
        uploads = form.cleaned_data["files"]
        job = job_submit(team=team, user=request.user, kind=kind, uploads=uploads)
        return redirect(job)
    return render(request, template, {"form": form}, status=400 if form.errors else 200)


@login_required
def job_new_page(request: HttpRequest) -> HttpResponse:
    return _upload_page(request, TraceUploadForm, JobKind.TRACE, "jobs/job_new.html")


@login_required
def code_new_page(request: HttpRequest) -> HttpResponse:
    return _upload_page(request, CodeUploadForm, JobKind.CODESCAN, "jobs/code_new.html")


def _trace_charts(report: dict) -> dict:
    ranks = report.get("ranks", [])
    logged = [rank for rank in ranks if rank.get("utilization_series")]
    charts = {
        "time_chart": time_breakdown_svg([r for r in ranks if not r.get("utilization_series")])
    }
    if logged:
        charts["utilization_chart"] = series_svg(
            [(f"GPU {r['rank']}", r["utilization_series"]) for r in logged],
            title="GPU utilisation over time",
            unit="%",
        )
        limits = []
        current = next((c for c in report.get("candidates", []) if c["is_current"]), None)
        capacity = logged[0].get("capacity_bytes")
        if capacity:
            limits.append((f"{current['gpu_name'] if current else 'this GPU'} capacity", capacity))
        advised = _advised(report)
        if advised:
            limits.append((f"{advised['gpu_name']} capacity", advised["capacity_bytes"]))
        charts["memory_chart"] = series_svg(
            [(f"GPU {r['rank']}", r["memory_series"]) for r in logged],
            title="GPU memory used over time",
            unit="GiB",
            scale=2**30,
            limits=limits,
        )
    return charts


def _advised(report: dict) -> dict | None:
    """The cheapest fitting candidate other than the current GPU, when the report stored its
    capacity (reports written before candidates carried capacity_bytes get no capacity line)."""
    candidates = report.get("candidates", [])
    current = next((c["gpu"] for c in candidates if c["is_current"]), None)
    # The current GPU on a smaller instance has the current GPU's capacity line already.
    options = [
        c
        for c in candidates
        if c["fits"] and not c["is_current"] and c["usd_per_1000_steps"] and c["gpu"] != current
    ]
    if not options:
        return None
    best = min(options, key=lambda c: c["usd_per_1000_steps"]["expected"])
    return best if best.get("capacity_bytes") else None


@login_required
def job_sarif_download(request: HttpRequest, public_id: str) -> HttpResponse:
    job = get_object_or_404(_team_jobs(request), public_id=public_id, kind=JobKind.CODESCAN)
    if not job.report or "sarif" not in job.report:
        raise Http404("This scan has no SARIF report (it has not finished, or it failed).")
    response = JsonResponse(served_sarif(request, job), json_dumps_params={"indent": 2})
    response["Content-Type"] = "application/sarif+json"
    response["Content-Disposition"] = f'attachment; filename="gpu-advisor-{job.public_id}.sarif"'
    return response


@login_required
def job_detail_page(request: HttpRequest, public_id: str) -> HttpResponse:
    job = get_object_or_404(_team_jobs(request), public_id=public_id)
    context = {"job": job}
    if job.report and job.kind == JobKind.CODESCAN:
        context.update(codescan_report_context(request, job))
    elif job.report:
        context.update(_trace_charts(job.report))
        context.update(trace_report_context(job.report))
        context["compare_choices"] = (
            _team_jobs(request)
            .filter(kind=JobKind.TRACE, status=JobStatus.DONE)
            .exclude(pk=job.pk)
            .defer("report")[:50]
        )
    if request.htmx and request.GET.get("fragment") == "progress":
        if job.finished:
            # Done: reload the whole page so the report renders.
            response = HttpResponse(status=204)
            response["HX-Refresh"] = "true"
            return response
        return render(request, "jobs/_progress.html", context)
    return render(request, "jobs/job_detail.html", context)


def _team_job_or_404(request: HttpRequest, public_id: str) -> Job:
    """The team's job with this id; another team's job, or an id that is not one, is a 404."""
    try:
        uuid.UUID(public_id)
    except ValueError:
        raise Http404("No such job.") from None
    return get_object_or_404(_team_jobs(request), public_id=public_id)


def _compare_job(request: HttpRequest, public_id: str | None, role: str) -> tuple[Job | None, str]:
    """The team's job for one side of a comparison, or None and why it cannot be compared."""
    if not public_id:
        return None, f"Choose the {role} job: two finished trace jobs are compared."
    job = _team_job_or_404(request, public_id)
    if job.kind != JobKind.TRACE:
        return None, f"The {role} job is a {job.get_kind_display()}, not a trace analysis."
    if job.status != JobStatus.DONE or not job.report:
        return None, f"The {role} job has not finished (it is {job.status}): compare it once done."
    return job, ""


@login_required
def job_compare_page(request: HttpRequest) -> HttpResponse:
    """Two trace jobs side by side, before (`a`) and after (`b`) a change. Ticking two jobs in
    the list sends `job` twice; that redirects to the shareable ?a=&b= address, older first."""
    picked = request.GET.getlist("job")
    if picked and not request.GET.get("a"):
        if len(picked) != 2:
            problem = f"Tick exactly two trace jobs to compare ({len(picked)} ticked)."
            return render(request, "jobs/job_compare.html", {"problems": [problem]}, status=400)
        older, newer = sorted(
            (_team_job_or_404(request, public_id) for public_id in picked),
            key=lambda job: (job.created_at, job.pk),
        )
        return redirect(f"{reverse('jobs:compare')}?a={older.public_id}&b={newer.public_id}")
    before, before_problem = _compare_job(request, request.GET.get("a"), "before")
    after, after_problem = _compare_job(request, request.GET.get("b"), "after")
    if before is None or after is None:
        problems = [problem for problem in (before_problem, after_problem) if problem]
        return render(request, "jobs/job_compare.html", {"problems": problems}, status=400)
    sides = [
        {
            "role": role,
            "label": role.capitalize(),
            "job": job,
            "summary": trace_report_context(job.report)["summary_lines"],
        }
        for role, job in (("before", before), ("after", after))
    ]
    context = {
        "sides": sides,
        "comparison": compare_jobs(trace_ranks(before.report), trace_ranks(after.report)),
    }
    return render(request, "jobs/job_compare.html", context)
