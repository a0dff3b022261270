from csp.decorators import csp_update
from django.contrib import admin
from django.http import HttpRequest, HttpResponsePermanentRedirect
from django.templatetags.static import static
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from config.health import healthz, readyz

api_v1 = (
    [path("", include("config.api_router")), path("", include("advisor.api.urls"))],
    "api",
)


def favicon(request: HttpRequest) -> HttpResponsePermanentRedirect:
    """Browsers ask for /favicon.ico on pages that name no icon (the admin's): the app's icon,
    resolved per request so that the static manifest is read only once it exists."""
    return HttpResponsePermanentRedirect(static("favicon.svg"))


urlpatterns = [
    path("favicon.ico", favicon),
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("admin/", admin.site.urls),
    path("account/", include("django.contrib.auth.urls")),
    path("account/", include("accounts.urls")),
    path("api/v1/", include(api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves Swagger UI's initialiser as a separate script, so scripts stay
    # 'self' only; Swagger UI sets inline styles, which this one page allows.
    path(
        "api/docs/",
        csp_update({"style-src": ["'unsafe-inline'"]})(
            SpectacularSwaggerSplitView.as_view(url_name="schema")
        ),
        name="api-docs",
    ),
    path("", include("advisor.urls")),
    path("", include("jobs.urls")),
    path("", include("catalog.urls")),
]

handler404 = "config.errors.not_found"
handler500 = "config.errors.server_failed"
