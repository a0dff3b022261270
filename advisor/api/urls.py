from django.urls import path

from advisor.api.capacity import CapacityView
from advisor.api.views import BundledModelsView, PortabilityView, SizingView

urlpatterns = [
    path("advice/sizing", SizingView.as_view(), name="advice-sizing"),
    path("advice/models", BundledModelsView.as_view(), name="advice-models"),
    path("advice/portability", PortabilityView.as_view(), name="advice-portability"),
    path("advice/capacity", CapacityView.as_view(), name="advice-capacity"),
]
