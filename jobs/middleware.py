from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from jobs.limits import TOO_MANY_FILES, too_large_message

# The views that take uploads, by URL name: the API endpoint and the two upload pages.
UPLOAD_VIEWS = frozenset({"api:job-list", "jobs:new", "jobs:new-code"})


def _is_api(request: HttpRequest) -> bool:
    match = request.resolver_match
    return match is not None and "api" in match.namespaces


class UploadSizeLimitMiddleware:
    """Request limits, answered in the caller's language: JSON (DRF's `{"detail": ...}`) under
    /api/, an HTML page elsewhere.

    An upload whose Content-Length is over JOB_UPLOAD_MAX_BYTES is refused before a byte of it
    is read: process_view runs before CsrfViewMiddleware's, which would read the body. Django's
    own limits, met while a view reads a body (DATA_UPLOAD_MAX_MEMORY_SIZE, _NUMBER_FILES,
    _NUMBER_FIELDS), raise exceptions that Django would answer with an HTML 400 page; on the API
    they become JSON errors.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(
        self, request: HttpRequest, view_func: Callable, view_args: tuple, view_kwargs: dict
    ) -> HttpResponse | None:
        match = request.resolver_match
        if request.method != "POST" or match is None or match.view_name not in UPLOAD_VIEWS:
            return None
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length <= settings.JOB_UPLOAD_MAX_BYTES:
            return None
        message = too_large_message(length)
        if _is_api(request):
            return JsonResponse({"detail": message}, status=413)
        return render(request, "413.html", {"message": message}, status=413)

    def process_exception(self, request: HttpRequest, exception: Exception) -> Any:
        if not _is_api(request):
            return None
        if isinstance(exception, RequestDataTooBig):
            limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
            message = (
                f"The request body is over the {limit:,}-byte limit "
                "(files in a multipart upload do not count towards it)."
            )
            return JsonResponse({"detail": message}, status=413)
        if isinstance(exception, TooManyFilesSent):
            return JsonResponse({"detail": TOO_MANY_FILES}, status=400)
        if isinstance(exception, TooManyFieldsSent):
            message = f"More than {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS:,} fields in one request."
            return JsonResponse({"detail": message}, status=400)
        return None
