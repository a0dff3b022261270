from django.urls import path

from jobs import codescan_views, views

app_name = "jobs"

urlpatterns = [
    path("jobs/", views.job_list_page, name="list"),
    path("jobs/new/", views.job_new_page, name="new"),
    path("jobs/new/code/", views.code_new_page, name="new-code"),
    path("jobs/compare/", views.job_compare_page, name="compare"),
    path("jobs/<uuid:public_id>/sarif/", views.job_sarif_download, name="sarif"),
    path("jobs/<uuid:public_id>/", views.job_detail_page, name="detail"),
    path(
        "jobs/<uuid:public_id>/findings/dismiss/",
        codescan_views.finding_dismiss_view,
        name="finding-dismiss",
    ),
    path(
        "jobs/<uuid:public_id>/findings/undismiss/",
        codescan_views.finding_undismiss_view,
        name="finding-undismiss",
    ),
    path("rules/", codescan_views.rule_list_page, name="rule-list"),
    path("rules/<str:rule_id>/", codescan_views.rule_detail_page, name="rule-detail"),
]
