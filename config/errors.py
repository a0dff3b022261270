"""Error pages for URLs no view matched: JSON under /api/, Django's HTML page elsewhere."""

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.defaults import page_not_found

API_PREFIX = "/api/"


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """An API client gets DRF's error body, as from every API view, not an HTML page: a path
    parameter that no route accepts (a key with a dot, a non-numeric id) ends here."""
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"detail": "Not found."}, status=404)
    return page_not_found(request, exception)
