import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = (
        "Create a superuser on first start and print its login once. "
        "If it exists already, say how to reset its password."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--username", default="admin")

    def handle(self, *args: Any, username: str, **options: Any) -> None:
        user_model = get_user_model()
        if user_model.objects.filter(username=username).exists():
            self.stdout.write(
                f"Admin user {username!r} exists. Forgot the password? "
                f"python manage.py changepassword {username}"
            )
            return
        password = secrets.token_urlsafe(12)
        user_model.objects.create_superuser(username=username, email="", password=password)
        self.stdout.write(
            self.style.SUCCESS(
                f"Created admin user. Log in at http://127.0.0.1:8000/admin/ as {username!r} "
                f"with password {password!r} (shown once)."
            )
        )
