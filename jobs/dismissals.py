"""Dismissed code-scan findings: a team's FindingDismissal rows, matched to a report's findings
by fingerprint, so that a dismissal made on one scan holds on every later scan of that code."""

from collections.abc import Iterable

from django import forms

from accounts.models import Team
from jobs.models import DismissalReason, FindingDismissal, Job
from jobs.reports import finding_fingerprints

COMMENT_MAX_CHARS = 280


class FindingDismissForm(forms.Form):
    fingerprint = forms.CharField(max_length=64)
    reason = forms.ChoiceField(
        choices=DismissalReason.choices,
        error_messages={
            "required": "Say why the finding is dismissed.",
            "invalid_choice": "Choose a reason: "
            + ", ".join(str(label) for _, label in DismissalReason.choices)
            + ".",
        },
    )
    comment = forms.CharField(max_length=COMMENT_MAX_CHARS, required=False, strip=True)


class UnknownFinding(LookupError):
    """The fingerprint is not one of the job's listed findings."""


def dismissals_by_fingerprint(
    team: Team, fingerprints: Iterable[str]
) -> dict[str, FindingDismissal]:
    wanted = set(fingerprints)
    if not wanted:
        return {}
    rows = FindingDismissal.objects.filter(team=team, fingerprint__in=wanted).select_related(
        "dismissed_by"
    )
    return {row.fingerprint: row for row in rows}


def _listed_finding(job: Job, fingerprint: str) -> dict:
    report = job.report or {}
    for key, finding in zip(finding_fingerprints(report), report.get("findings", []), strict=True):
        if key == fingerprint:
            return finding
    raise UnknownFinding(fingerprint)


def finding_dismiss(
    *, job: Job, user, fingerprint: str, reason: str, comment: str = ""
) -> FindingDismissal:
    """Dismiss one of the job's findings for the job's team (again: the new reason wins).
    Raises UnknownFinding for a fingerprint the job's report does not list."""
    finding = _listed_finding(job, fingerprint)
    dismissal, _ = FindingDismissal.objects.update_or_create(
        team=job.team,
        fingerprint=fingerprint,
        defaults={
            "rule_id": finding["rule_id"],
            "file": finding["file"][:500],
            "reason": reason,
            "comment": comment,
            "dismissed_by": user,
        },
    )
    return dismissal


def finding_undismiss(*, job: Job, fingerprint: str) -> bool:
    """Undo a dismissal of one of the job's findings; False when it was not dismissed."""
    _listed_finding(job, fingerprint)
    deleted, _ = FindingDismissal.objects.filter(team=job.team, fingerprint=fingerprint).delete()
    return bool(deleted)
