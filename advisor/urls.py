from django.urls import path

from advisor import portability_views, views

app_name = "advisor"

urlpatterns = [
    path("size/", views.sizing_page, name="sizing"),
    path("portability/", portability_views.portability_page, name="portability"),
]
