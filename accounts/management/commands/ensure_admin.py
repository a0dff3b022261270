import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from accounts.models import Membership, Team


class Command(BaseCommand):
    help = (
        "Create a superuser (and a first team it administers) on first start and print the "
        "login once. If the user exists already, say how to reset its password."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--username", default="admin")
        parser.add_argument("--team", default="My team", help="Name of the first team.")

    def handle(self, *args: Any, username: str, team: str, **options: Any) -> None:
        user_model = get_user_model()
        if user_model.objects.filter(username=username).exists():
            self.stdout.write(
                f"Admin user {username!r} exists. Forgot the password? "
                f"python manage.py changepassword {username}"
            )
            return
        password = secrets.token_urlsafe(12)
        user = user_model.objects.create_superuser(username=username, email="", password=password)
        first_team, _ = Team.objects.get_or_create(name=team, defaults={"slug": "my-team"})
        Membership.objects.create(team=first_team, user=user, role=Membership.Role.ADMIN)
        self.stdout.write(
            self.style.SUCCESS(
                f"Created admin user {username!r} with password {password!r} (shown once), "
                f"admin of the team {first_team.name!r}. Sign in at /account/login/ "
                "or /admin/."
            )
        )
