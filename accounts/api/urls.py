from accounts.api.views import ApiTokenViewSet, MembershipViewSet, TeamViewSet

routes = [
    ("teams", TeamViewSet, "team"),
    ("tokens", ApiTokenViewSet, "token"),
    ("memberships", MembershipViewSet, "membership"),
]
