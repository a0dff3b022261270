from django.contrib import admin
from django.http import HttpRequest

from catalog.models import Gpu, Offer, PriceHistory, Provider
from catalog.services import offer_price_set


@admin.register(Gpu)
class GpuAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "vendor",
        "architecture",
        "memory_gib",
        "memory_bandwidth_gb_s",
        "bf16_tflops_dense",
        "fp8_tflops_dense",
        "confidence",
    ]
    list_filter = ["vendor", "architecture", "confidence", "supports_fp8", "supports_bf16"]
    search_fields = ["name", "canonical_key", "architecture"]
    ordering = ["vendor", "name"]


@admin.register(Provider)
class ProviderAdmin(admin.ModelAdmin):
    list_display = ["name", "key", "website"]
    search_fields = ["name", "key"]


class PriceHistoryInline(admin.TabularInline):
    model = PriceHistory
    fields = ["observed_at", "usd_per_hour", "previous_usd_per_hour", "source", "changed_by"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ["-observed_at", "-id"]

    def has_add_permission(self, request: HttpRequest, obj: Offer | None = None) -> bool:
        return False


@admin.register(Offer)
class OfferAdmin(admin.ModelAdmin):
    """Offers come from price feeds; staff correct a price here and the history records who."""

    list_display = [
        "instance_type",
        "provider",
        "region",
        "zone",
        "gpu",
        "gpu_count",
        "pricing_model",
        "usd_per_hour",
        "usd_per_gpu_hour",
        "price_observed_at",
    ]
    list_filter = ["provider", "gpu__vendor", "pricing_model", "gpu", "region"]
    list_select_related = ["provider", "gpu"]
    search_fields = ["instance_type", "region", "zone", "gpu__name", "provider__name"]
    readonly_fields = [
        "provider",
        "instance_type",
        "region",
        "zone",
        "gpu",
        "gpu_count",
        "accelerator_name",
        "vcpus",
        "ram_gib",
        "pricing_model",
        "usd_per_gpu_hour",
        "source",
        "price_observed_at",
        "created_at",
        "updated_at",
    ]
    inlines = [PriceHistoryInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: Offer, form, change: bool) -> None:
        if change and "usd_per_hour" in form.changed_data:
            offer_price_set(
                offer=obj,
                usd_per_hour=form.cleaned_data["usd_per_hour"],
                previous_usd_per_hour=form.initial["usd_per_hour"],
                user=request.user,
            )
        else:
            super().save_model(request, obj, form, change)


@admin.register(PriceHistory)
class PriceHistoryAdmin(admin.ModelAdmin):
    list_display = [
        "offer",
        "observed_at",
        "usd_per_hour",
        "previous_usd_per_hour",
        "source",
        "changed_by",
    ]
    list_filter = ["source", "offer__provider"]
    list_select_related = ["offer__provider", "changed_by"]
    search_fields = ["offer__instance_type"]
    date_hierarchy = "observed_at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: PriceHistory | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: PriceHistory | None = None) -> bool:
        return False
