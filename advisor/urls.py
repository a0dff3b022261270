from django.urls import path

from advisor.views import plan, portability, sizing

app_name = "advisor"

urlpatterns = [
    path("size/", sizing.sizing_page, name="sizing"),
    path("plan/", plan.plan_page, name="plan"),
    path("portability/", portability.portability_page, name="portability"),
]
