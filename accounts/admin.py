from django.contrib import admin

from accounts.models import ApiToken, Membership, Team


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1
    autocomplete_fields = ["user"]


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]


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
