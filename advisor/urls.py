from django.urls import path

from advisor import views

app_name = "advisor"

urlpatterns = [
    path("size/", views.sizing_page, name="sizing"),
]
