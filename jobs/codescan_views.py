"""The code-scan report's parts of the job page (findings with their snippets and dismissals,
evidence linked to its findings), dismissing and restoring findings, and the rule pages that
every finding and the SARIF's helpUri link to."""

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from accounts.scoping import request_team_ids
from jobs.dismissals import (
    FindingDismissForm,
    UnknownFinding,
    dismissals_by_fingerprint,
    finding_dismiss,
    finding_undismiss,
)
from jobs.domain.codescan import RULES, with_help_uris
from jobs.domain.codescan.rule_docs import CATEGORY_NAMES, rule_page, rule_pages
from jobs.domain.codescan.sarif import with_suppressions
from jobs.models import DismissalReason, Job, JobKind, JobStatus
from jobs.reports import (
    FINDING_FILTERS,
    finding_anchor,
    finding_fingerprints,
    finding_snippet_lines,
    findings_matching,
)

FINDINGS_PER_PAGE = 100


def _scan_jobs(request: HttpRequest) -> QuerySet[Job]:
    return Job.objects.filter(
        team_id__in=request_team_ids(request), kind=JobKind.CODESCAN, status=JobStatus.DONE
    ).select_related("team")


def _cited(items: list[str], links: dict[str, str]) -> list[dict]:
    return [{"text": item, "href": links.get(item)} for item in items]


def codescan_report_context(request: HttpRequest, job: Job) -> dict:
    """The findings page by page (open ones; dismissed ones apart), the filters, and the
    scorecard's and verdicts' citations linked to the findings they name."""
    report = job.report
    keys = finding_fingerprints(report)
    dismissals = dismissals_by_fingerprint(job.team, keys)
    rows = [
        {
            **finding,
            "fingerprint": key,
            "anchor": finding_anchor(key),
            "snippet_lines": finding_snippet_lines(finding),
            "dismissal": dismissals.get(key),
        }
        for finding, key in zip(report.get("findings", []), keys, strict=True)
    ]
    open_rows = [row for row in rows if row["dismissal"] is None]
    dismissed_rows = [row for row in rows if row["dismissal"] is not None]
    # A citation "RULE file:line" links to its row: on its page of the unfiltered list, or
    # in the dismissed table, which every page shows.
    links = {
        f"{row['rule_id']} {row['file']}:{row['line']}": (
            f"?page={index // FINDINGS_PER_PAGE + 1}#{row['anchor']}"
        )
        for index, row in enumerate(open_rows)
    }
    links.update(
        {f"{r['rule_id']} {r['file']}:{r['line']}": f"#{r['anchor']}" for r in dismissed_rows}
    )
    chosen = {key: request.GET[key] for key in FINDING_FILTERS if request.GET.get(key)}
    shown = Paginator(findings_matching({"findings": open_rows}, chosen), FINDINGS_PER_PAGE)
    findings = report.get("findings", [])
    return {
        "findings_page": shown.get_page(request.GET.get("page")),
        "finding_filter": chosen,
        "finding_choices": {
            key: sorted({str(f.get(key)) for f in findings}) for key in FINDING_FILTERS
        },
        # Reports stored before the cap have no total: everything they found is listed.
        "findings_total": report.get("findings_total") or len(findings),
        "dismissed_findings": dismissed_rows,
        "dismissal_reasons": DismissalReason.choices,
        "scorecard_rows": [
            {**row, "cited": _cited(row["evidence"], links)} for row in report.get("scorecard", [])
        ],
        "verdict_rows": [
            {"target": target, **verdict, "cited": _cited(verdict["deciding"], links)}
            for target, verdict in report.get("verdicts", {}).items()
        ],
        "category_legend": list(CATEGORY_NAMES.items()),
    }


def _back_to_report(job: Job, anchor: str = "findings") -> HttpResponse:
    return redirect(f"{job.get_absolute_url()}#{anchor}")


@login_required
@require_POST
def finding_dismiss_view(request: HttpRequest, public_id: str) -> HttpResponse:
    """Dismiss a finding for the job's team. Another team's job is a 404, as its page is."""
    job = get_object_or_404(_scan_jobs(request), public_id=public_id)
    form = FindingDismissForm(request.POST)
    if not form.is_valid():
        problems = [error for errors in form.errors.values() for error in errors]
        context = {"job": job, "dismiss_problems": problems}
        context.update(codescan_report_context(request, job))
        return render(request, "jobs/job_detail.html", context, status=400)
    try:
        dismissal = finding_dismiss(job=job, user=request.user, **form.cleaned_data)
    except UnknownFinding:
        raise Http404("This scan lists no such finding.") from None
    return _back_to_report(job, finding_anchor(dismissal.fingerprint))


@login_required
@require_POST
def finding_undismiss_view(request: HttpRequest, public_id: str) -> HttpResponse:
    job = get_object_or_404(_scan_jobs(request), public_id=public_id)
    fingerprint = request.POST.get("fingerprint", "")
    try:
        finding_undismiss(job=job, fingerprint=fingerprint)
    except UnknownFinding:
        raise Http404("This scan lists no such finding.") from None
    return _back_to_report(job, finding_anchor(fingerprint))


def rule_help_uris(request: HttpRequest) -> dict[str, str]:
    """Every rule's page as an absolute URL on the host the request came to."""
    return {
        rule_id: request.build_absolute_uri(reverse("jobs:rule-detail", args=[rule_id]))
        for rule_id in RULES
    }


def served_sarif(request: HttpRequest, job: Job) -> dict:
    """The job's stored SARIF as served: rules link to their pages on this host, and the
    results the team dismissed carry SARIF suppressions (as GitHub reads them)."""
    keys = finding_fingerprints(job.report)
    dismissals = dismissals_by_fingerprint(job.team, keys)
    justifications = {
        index: ": ".join(
            filter(None, [dismissals[key].get_reason_display(), dismissals[key].comment])
        )
        for index, key in enumerate(keys)
        if key in dismissals
    }
    linked = with_help_uris(job.report["sarif"], rule_help_uris(request))
    return with_suppressions(linked, justifications)


def rule_list_page(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "rules/rule_list.html",
        {"pages": rule_pages(), "categories": CATEGORY_NAMES},
    )


def rule_detail_page(request: HttpRequest, rule_id: str) -> HttpResponse:
    if rule_id not in RULES:
        raise Http404(f"No rule {rule_id} in the catalogue.")
    return render(request, "rules/rule_detail.html", {"page": rule_page(rule_id)})
