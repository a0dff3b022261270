from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def sizing_page(request: HttpRequest) -> HttpResponse:
    """Placeholder until the sizing form lands (being built now)."""
    return render(request, "advisor/sizing.html", {})
