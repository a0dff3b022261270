from django.apps import AppConfig


class AccountsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "accounts"
    verbose_name = "Teams, accounts and API tokens"

    def ready(self) -> None:
        from accounts import (
            schema,  # noqa: F401 - registers the OpenAPI auth extension
            signals,  # noqa: F401 - revokes a leaving member's tokens
        )
