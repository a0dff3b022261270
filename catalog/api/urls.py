from rest_framework.routers import DefaultRouter

from catalog.api.views import GpuViewSet, OfferViewSet

router = DefaultRouter(trailing_slash=True)
router.register("gpus", GpuViewSet, basename="gpu")
router.register("offers", OfferViewSet, basename="offer")

urlpatterns = router.urls
