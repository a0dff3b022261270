"""Error answers Django gives when no view answered: JSON in DRF's shape under /api/, pages
elsewhere.

- 404: a URL no route matched.
- 500: a view or middleware raised. When the cause is the database being unreachable, the
  answer is a 503 with Retry-After (JSON under /api/, a plain page that needs no database
  elsewhere), never Django's HTML 500 page.
"""

import sys

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.views.defaults import page_not_found, server_error

API_PREFIX = "/api/"
DATABASE_DOWN = (
    "The database is not answering, so this request could not be served. Nothing was changed."
)


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """An API client gets DRF's error body, as from every API view, not an HTML page: a path
    parameter that no route accepts (a key with a dot, a non-numeric id) ends here."""
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"detail": "Not found."}, status=404)
    return page_not_found(request, exception)


def server_failed(request: HttpRequest) -> HttpResponse:
    """Django calls this while handling the exception, so sys.exc_info() names it."""
    _, error, _ = sys.exc_info()
    if _database_unreachable(error):
        return _unavailable(request)
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"detail": "A server error occurred."}, status=500)
    return server_error(request)


def _database_unreachable(error: BaseException | None) -> bool:
    # OperationalError: the connection failed or was lost; InterfaceError: it was closed.
    # Anything else the database raises (an IntegrityError) is a bug of ours, a 500.
    while error is not None:
        if isinstance(error, OperationalError | InterfaceError):
            return True
        error = error.__cause__ or error.__context__
    return False


def _unavailable(request: HttpRequest) -> HttpResponse:
    retry_after_s = settings.DATABASE_RETRY_AFTER_S
    if request.path.startswith(API_PREFIX):
        response: HttpResponse = JsonResponse({"detail": DATABASE_DOWN}, status=503)
    else:
        page = render_to_string(
            "503.html", {"message": DATABASE_DOWN, "retry_after_s": retry_after_s}
        )
        response = HttpResponse(page, status=503)
    response["Retry-After"] = str(retry_after_s)
    return response
