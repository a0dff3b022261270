from django.urls import path

from advisor.views import portability, sizing

app_name = "advisor"

urlpatterns = [
    path("size/", sizing.sizing_page, name="sizing"),
    path("portability/", portability.portability_page, name="portability"),
]
