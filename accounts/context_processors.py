from django.http import HttpRequest

from accounts.models import Team
from accounts.scoping import session_active_team


def teams(request: HttpRequest) -> dict:
    """The signed-in user's teams and the one they are working in, for the page header."""
    if not request.user.is_authenticated:
        return {}
    return {
        "my_teams": Team.objects.filter(memberships__user=request.user).order_by("name"),
        "active_team": session_active_team(request),
    }
