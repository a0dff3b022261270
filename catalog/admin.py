import io

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from catalog.feeds.csv_import import __doc__ as CSV_FORMAT
from catalog.feeds.http import FeedError
from catalog.models import (
    Gpu,
    Offer,
    PriceHistory,
    PriceRefresh,
    PriceSource,
    Provider,
    QuarantinedPrice,
)
from catalog.services import (
    RefreshAlreadyRunning,
    offer_price_set,
    price_refresh,
    price_source_fetcher,
    quarantined_price_decide,
)
from catalog.tasks import refresh_prices

SCHEDULED_SOURCES = (PriceSource.GPUHUNT, PriceSource.AZURE, PriceSource.SKYPILOT)
MAX_CSV_BYTES = 5 * 1024 * 1024


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
    list_display = ["name", "key", "kind", "website"]
    list_filter = ["kind"]
    search_fields = ["name", "key"]


# What a price history row shows, on its own page and inline under its offer.
HISTORY_FIELDS = [
    "observed_at",
    "usd_per_hour",
    "previous_usd_per_hour",
    "source",
    "changed_by",
    "reason",
]


class PriceHistoryInline(admin.TabularInline):
    model = PriceHistory
    fields = HISTORY_FIELDS
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ["-observed_at", "-id"]

    def has_add_permission(self, request: HttpRequest, obj: Offer | None = None) -> bool:
        return False


class OfferPriceForm(forms.ModelForm):
    """A staff price edit says why: the reason is kept in the price history."""

    reason = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Why this price (a quote, the provider's page, a correction); required when "
        "the price changes, and kept in the price history.",
    )

    class Meta:
        model = Offer
        fields = ["usd_per_hour"]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.term_hours:
            self.fields["usd_per_hour"].help_text = (
                f"Per hour, paid for the whole term: the term's price over its "
                f"{self.instance.term_hours:,} hours (the source says the total)."
            )

    def clean(self):
        cleaned = super().clean()
        if "usd_per_hour" in self.changed_data and not cleaned.get("reason", "").strip():
            self.add_error("reason", "Say why the price changes: it is kept in the history.")
        return cleaned


@admin.register(Offer)
class OfferAdmin(admin.ModelAdmin):
    """Offers come from price feeds; staff correct a price here and the history records who
    and why."""

    form = OfferPriceForm

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
        # A reservation's source note gives the term's total beside its hourly equivalent.
        "source",
    ]
    list_filter = ["provider", "provider__kind", "gpu__vendor", "pricing_model", "gpu", "region"]
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
        "last_seen_at",
        "listed_by",
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
                reason=form.cleaned_data["reason"].strip(),
            )
        else:
            super().save_model(request, obj, form, change)


@admin.register(PriceHistory)
class PriceHistoryAdmin(admin.ModelAdmin):
    list_display = ["offer", *HISTORY_FIELDS]
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


class CsvImportForm(forms.Form):
    file = forms.FileField(help_text="UTF-8 CSV with a header row; see the format above.")

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload.size > MAX_CSV_BYTES:
            raise forms.ValidationError("The file is over 5 MiB; split it.")
        try:
            return upload.read().decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise forms.ValidationError("This is not UTF-8 text: is it a CSV file?") from error


@admin.register(PriceRefresh)
class PriceRefreshAdmin(admin.ModelAdmin):
    """Every refresh run with its counts and, when it failed, why. Also: refresh now, CSV import."""

    change_list_template = "admin/catalog/pricerefresh/change_list.html"
    list_display = [
        "started_at",
        "source",
        "status",
        "triggered_by",
        "seen",
        "new",
        "changed",
        "unchanged",
        "stale",
        "quarantined",
        "rejected",
        "unmatched",
        "reason",
    ]
    list_filter = ["source", "status"]
    readonly_fields = [f.name for f in PriceRefresh._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def get_urls(self):
        return [
            path(
                "refresh/<str:source>/",
                self.admin_site.admin_view(self.refresh_now),
                name="catalog_pricerefresh_refresh",
            ),
            path(
                "import-csv/",
                self.admin_site.admin_view(self.import_csv),
                name="catalog_pricerefresh_import_csv",
            ),
            *super().get_urls(),
        ]

    def changelist_view(self, request: HttpRequest, extra_context=None):
        extra_context = {**(extra_context or {}), "refresh_sources": SCHEDULED_SOURCES}
        return super().changelist_view(request, extra_context)

    def refresh_now(self, request: HttpRequest, source: str) -> HttpResponse:
        if request.method != "POST" or source not in SCHEDULED_SOURCES:
            return HttpResponseRedirect(reverse("admin:catalog_pricerefresh_changelist"))
        if not request.user.has_perm("catalog.change_offer"):
            messages.error(request, "You may not change prices.")
            return HttpResponseRedirect(reverse("admin:catalog_pricerefresh_changelist"))
        who = f"admin: {request.user.get_username()}"
        if settings.CELERY_TASK_ALWAYS_EAGER:
            # Embedded mode has no worker: run it here, once, without the task's retries.
            try:
                run = price_refresh(
                    source=source, fetch=price_source_fetcher(source), triggered_by=who
                )
            except (RefreshAlreadyRunning, FeedError) as error:
                messages.error(request, f"{source} refresh failed, no price changed: {error}")
            else:
                messages.info(request, f"{source} refresh {run.status}. {run.reason}")
        else:
            transaction.on_commit(lambda: refresh_prices.delay(source, who))
            messages.info(request, f"{source} refresh queued; its run appears below once started.")
        return HttpResponseRedirect(reverse("admin:catalog_pricerefresh_changelist"))

    def import_csv(self, request: HttpRequest) -> HttpResponse:
        if not request.user.has_perm("catalog.change_offer"):
            messages.error(request, "You may not change prices.")
            return HttpResponseRedirect(reverse("admin:catalog_pricerefresh_changelist"))
        form = CsvImportForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            lines = io.StringIO(form.cleaned_data["file"])
            try:
                run = price_refresh(
                    source=PriceSource.CSV,
                    fetch=price_source_fetcher(PriceSource.CSV, lines=lines),
                    triggered_by=f"admin: {request.user.get_username()}",
                )
            except (RefreshAlreadyRunning, FeedError) as error:
                messages.error(request, f"Nothing imported: {error}")
            else:
                level = messages.SUCCESS if run.status == run.Status.SUCCEEDED else messages.ERROR
                messages.add_message(
                    request,
                    level,
                    f"CSV import {run.status}: {run.new} new, {run.changed} changed, "
                    f"{run.quarantined} quarantined, {run.rejected} rejected, "
                    f"{run.unmatched} unmatched. {run.reason}",
                )
                return HttpResponseRedirect(reverse("admin:catalog_pricerefresh_changelist"))
        return TemplateResponse(
            request,
            "admin/catalog/pricerefresh/import_csv.html",
            {
                **self.admin_site.each_context(request),
                "form": form,
                "csv_format": CSV_FORMAT,
                "title": "Import prices from CSV",
                "opts": self.model._meta,
            },
        )


@admin.register(QuarantinedPrice)
class QuarantinedPriceAdmin(admin.ModelAdmin):
    """Prices that jumped more than 3x: a person accepts (it goes live) or rejects them."""

    list_display = [
        "offer",
        "current_usd_per_hour",
        "proposed_usd_per_hour",
        "ratio_display",
        "observed_at",
        "decision",
        "decided_by",
        "decided_at",
    ]
    list_filter = ["decision", "offer__provider"]
    list_select_related = ["offer__provider", "decided_by"]
    readonly_fields = [f.name for f in QuarantinedPrice._meta.fields]
    actions = ["accept", "reject"]

    @admin.display(description="ratio")
    def ratio_display(self, obj: QuarantinedPrice) -> str:
        return f"{obj.ratio:.2f}x"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def _decide(self, request: HttpRequest, queryset, accept: bool) -> None:
        pending = queryset.filter(decision=QuarantinedPrice.Decision.PENDING).select_related(
            "offer"
        )
        for held in pending:
            quarantined_price_decide(quarantined=held, accept=accept, user=request.user)
        verb = "accepted" if accept else "rejected"
        messages.success(request, f"{len(pending)} held price(s) {verb}.")

    @admin.action(description="Accept: make the proposed price live", permissions=["change"])
    def accept(self, request: HttpRequest, queryset) -> None:
        self._decide(request, queryset, accept=True)

    @admin.action(description="Reject: keep the current price", permissions=["change"])
    def reject(self, request: HttpRequest, queryset) -> None:
        self._decide(request, queryset, accept=False)
