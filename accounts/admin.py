from django.contrib import admin

from accounts.models import ApiToken, Membership, Team
from accounts.services import team_token_lifetime_cap_set


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1
    autocomplete_fields = ["user"]


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    """Staff edit teams and their members here; the only-admin rule of the API does not apply."""

    list_display = ["name", "slug", "max_token_lifetime_days", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]

    def save_model(self, request, obj: Team, form, change: bool) -> None:
        super().save_model(request, obj, form, change)
        if change and "max_token_lifetime_days" in form.changed_data:
            # Through the service, so live tokens past the new cap are cut to it as on the API.
            team_token_lifetime_cap_set(team=obj, max_days=obj.max_token_lifetime_days)


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Staff can see and revoke tokens; nobody can read one back (only digests are stored)."""

    list_display = ["name", "token_key", "user", "team", "created", "expiry", "last_used_at"]
    list_filter = ["team"]
    search_fields = ["name", "user__username", "token_key"]
    fields = ["name", "token_key", "user", "team", "created", "expiry", "last_used_at"]
    readonly_fields = fields

    def has_add_permission(self, request) -> bool:
        return False
