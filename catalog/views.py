from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django_filters import FilterSet

from catalog.charts import price_history_svg
from catalog.domain.offer_groups import group_offers_by_provider
from catalog.filters import GpuFilter, OfferFilter
from catalog.models import Gpu
from catalog.selectors import (
    gpu_cheapest_per_gpu_hour_history,
    gpu_list,
    gpu_offers_list,
    offer_history_list,
    offer_list,
    price_refreshes_failed_since_success,
    price_sources_last_refreshed,
)
from catalog.snapshots import gpus_with_offer_stats

OFFERS_PER_PAGE = 50
# The GPU page answers "where is it cheapest": a few rows per provider, a few providers a page.
ROWS_PER_PROVIDER = 10
PROVIDERS_PER_PAGE = 8


def _filtered(filterset: FilterSet) -> QuerySet:
    """Invalid filter values show their errors and no rows, rather than being ignored."""
    return filterset.qs if filterset.is_valid() else filterset.queryset.none()


# The GPU list's price columns: figures of this process's offer snapshot, sorted here (the
# FilterSet sorts by table columns). GPUs without such offers go last either way.
PRICE_ORDERINGS = ("min_on_demand_usd_per_gpu_hour", "min_spot_usd_per_gpu_hour")


def gpu_list_page(request: HttpRequest) -> HttpResponse:
    query = request.GET.copy()
    ordering = query.get("ordering", "")
    by_price = ordering.lstrip("-") in PRICE_ORDERINGS
    if by_price:
        query.pop("ordering")
    gpu_filter = GpuFilter(query, queryset=gpu_list())
    gpus = gpus_with_offer_stats(_filtered(gpu_filter))
    if by_price:
        field, descending = ordering.lstrip("-"), ordering.startswith("-")
        priced = sorted(
            (gpu for gpu in gpus if getattr(gpu, field) is not None),
            key=lambda gpu: getattr(gpu, field),
            reverse=descending,
        )
        gpus = priced + [gpu for gpu in gpus if getattr(gpu, field) is None]
    return render(
        request,
        "catalog/gpu_list.html",
        {"filter": gpu_filter, "gpus": gpus, "ordering": ordering},
    )


def gpu_detail_page(request: HttpRequest, canonical_key: str) -> HttpResponse:
    """Offers grouped by provider and paged by provider; `?all=1` lists every offer flat."""
    gpu = get_object_or_404(Gpu, canonical_key=canonical_key)
    offers = list(gpu_offers_list(gpu=gpu))
    show_all = request.GET.get("all") == "1"
    groups = group_offers_by_provider(offers, rows_per_provider=ROWS_PER_PROVIDER)
    provider_page = Paginator(groups, PROVIDERS_PER_PAGE).get_page(request.GET.get("page"))
    return render(
        request,
        "catalog/gpu_detail.html",
        {
            "gpu": gpu,
            "mig_profiles": gpu.mig_profiles.all(),
            "show_all": show_all,
            "offers": offers if show_all else [],
            "offer_count": len(offers),
            "provider_count": len(groups),
            "provider_page": provider_page,
            "rows_per_provider": ROWS_PER_PROVIDER,
            "history_chart": price_history_svg(
                gpu_cheapest_per_gpu_hour_history(gpu=gpu),
                title=f"Cheapest {gpu.name} offer, USD per GPU-hour, at each observation",
                until=timezone.now(),
            ),
        },
    )


def offer_detail_page(request: HttpRequest, offer_id: int) -> HttpResponse:
    offer = get_object_or_404(offer_list(), pk=offer_id)
    history = offer_history_list(offer=offer)
    return render(
        request,
        "catalog/offer_detail.html",
        {
            "offer": offer,
            "history": history,
            "history_chart": price_history_svg(
                [(row.observed_at, float(row.usd_per_hour)) for row in history],
                title=f"{offer} price history, USD per hour",
                until=timezone.now(),
            ),
        },
    )


def refresh_status() -> dict:
    """What the offer pages say of the prices' age: each source's last successful refresh,
    and the sources whose latest refresh failed."""
    return {
        "refreshed": price_sources_last_refreshed(),
        "failed_refreshes": price_refreshes_failed_since_success(),
    }


def offer_list_page(request: HttpRequest) -> HttpResponse:
    offer_filter = OfferFilter(
        request.GET, queryset=offer_list().order_by("usd_per_gpu_hour", "id")
    )
    page = Paginator(_filtered(offer_filter), OFFERS_PER_PAGE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "catalog/offer_list.html",
        {
            "filter": offer_filter,
            "page": page,
            "query": query.urlencode(),
            **refresh_status(),
        },
    )
