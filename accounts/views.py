from datetime import timedelta

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from accounts.forms import ApiTokenForm
from accounts.models import Team
from accounts.scoping import ACTIVE_TEAM_SESSION_KEY, request_admin_team_ids, request_team_ids
from accounts.services import Refused, api_token_create, api_token_revoke, api_tokens_visible
from accounts.throttling import TokenCreateThrottle


def _visible_tokens(request: HttpRequest):
    return api_tokens_visible(
        user=request.user,
        team_ids=request_team_ids(request),
        admin_team_ids=request_admin_team_ids(request),
    )


@login_required
def tokens_page(request: HttpRequest) -> HttpResponse:
    teams = Team.objects.filter(memberships__user=request.user)
    form = ApiTokenForm(request.POST or None, teams=teams)
    created_token = None
    retry_after_s = None
    if request.method == "POST" and form.is_valid():
        # The API's throttle, so a script holding a session cookie gets no second budget here.
        throttle = TokenCreateThrottle()
        if throttle.allow_request(request, None):
            created_token = _token_from_form(request, form)
        else:
            retry_after_s = max(1, int(throttle.wait() or 0))
            form.add_error(None, f"Too many tokens created; try again in {retry_after_s} s.")
        if created_token:
            form = ApiTokenForm(teams=teams)
    response = render(
        request,
        "accounts/tokens.html",
        {
            "form": form,
            "tokens": _visible_tokens(request),
            "teams": teams,
            "created_token": created_token,
        },
        status=200 if retry_after_s is None else 429,
    )
    if retry_after_s is not None:
        response["Retry-After"] = str(retry_after_s)
    return response


def _token_from_form(request: HttpRequest, form: ApiTokenForm) -> str | None:
    """The raw new token, or None with the reason added to the form. The rules are the API's:
    they live in `api_token_create`."""
    days = form.cleaned_data["expires_in_days"]
    try:
        _, raw = api_token_create(
            user=request.user,
            team=form.cleaned_data["team"],
            name=form.cleaned_data["name"],
            expires_in=timedelta(days=days) if days else None,
        )
    except Refused as error:
        form.add_error(error.field if error.field in form.fields else None, error.reason)
        return None
    except PermissionError:
        form.add_error("team", "You are not a member of this team.")
        return None
    return raw


@login_required
@require_POST
def token_revoke(request: HttpRequest, public_id: str) -> HttpResponse:
    token = _visible_tokens(request).filter(public_id=public_id).first()
    if token is None:
        raise Http404("No such token.")
    api_token_revoke(token=token)
    messages.success(request, f"Token {token.name!r} revoked.")
    return redirect("accounts:tokens")


@login_required
@require_POST
def active_team_set(request: HttpRequest) -> HttpResponse:
    """Choose the team that new uploads and tokens belong to (only among your own teams)."""
    team = Team.objects.filter(memberships__user=request.user, pk=request.POST.get("team")).first()
    if team is None:
        raise Http404("No such team.")
    request.session[ACTIVE_TEAM_SESSION_KEY] = team.pk
    messages.success(request, f"Now working in {team.name}.")
    next_url = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(next_url, allowed_hosts={request.get_host()}):
        next_url = ""
    return redirect(next_url or "accounts:tokens")
