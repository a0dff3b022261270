"""One router for /api/v1/: each app lists its routes in <app>/api/urls.py."""

from rest_framework.routers import DefaultRouter

from accounts.api.urls import routes as accounts_routes
from catalog.api.urls import routes as catalog_routes
from jobs.api.urls import routes as jobs_routes

router = DefaultRouter(trailing_slash=True)
for prefix, viewset, basename in [*catalog_routes, *accounts_routes, *jobs_routes]:
    router.register(prefix, viewset, basename=basename)

urlpatterns = router.urls
