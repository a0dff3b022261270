from django.urls import path

from catalog import views

app_name = "catalog"

urlpatterns = [
    path("", views.gpu_list_page, name="gpu-list"),
    path("gpus/compare/", views.gpu_compare_page, name="gpu-compare"),
    path("gpus/<slug:canonical_key>/", views.gpu_detail_page, name="gpu-detail"),
    path("offers/", views.offer_list_page, name="offer-list"),
    path("offers/<int:offer_id>/", views.offer_detail_page, name="offer-detail"),
]
