from catalog.api.views import GpuViewSet, OfferViewSet

routes = [
    ("gpus", GpuViewSet, "gpu"),
    ("offers", OfferViewSet, "offer"),
]
