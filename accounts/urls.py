from django.urls import path

from accounts import views

app_name = "accounts"

urlpatterns = [
    path("tokens/", views.tokens_page, name="tokens"),
    path("team/", views.active_team_set, name="active-team"),
    path("tokens/<uuid:public_id>/revoke/", views.token_revoke, name="token-revoke"),
]
