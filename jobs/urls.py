from django.urls import path

from jobs import views

app_name = "jobs"

urlpatterns = [
    path("jobs/", views.job_list_page, name="list"),
    path("jobs/new/", views.job_new_page, name="new"),
    path("jobs/new/code/", views.code_new_page, name="new-code"),
    path("jobs/<uuid:public_id>/sarif/", views.job_sarif_download, name="sarif"),
    path("jobs/<uuid:public_id>/", views.job_detail_page, name="detail"),
]
