from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, render
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.http import urlencode
from django_filters import FilterSet

from catalog.charts import price_history_svg
from catalog.comparison import COMPARE_MAX_GPUS, comparison_rows, gpus_compared
from catalog.domain.offer_groups import group_offers_by_provider
from catalog.filters import GpuFilter, OfferFilter
from catalog.models import Gpu
from catalog.selectors import (
    gpu_cheapest_per_gpu_hour_history,
    gpu_list,
    gpu_offers_list,
    offer_history_list,
    offer_list,
    offers_merged_by_zone,
    offers_with_zones,
    price_refreshes_failed_since_success,
    price_sources_last_refreshed,
)
from catalog.snapshots import CatalogueSnapshot, gpus_with_offer_stats

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


def _listed_gpus(query: QueryDict) -> tuple[GpuFilter, list[Gpu]]:
    ordering = query.get("ordering", "")
    by_price = ordering.lstrip("-") in PRICE_ORDERINGS
    if by_price:
        query = query.copy()
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
    return gpu_filter, gpus


def _rendered_rows(query: QueryDict) -> tuple[GpuFilter, list[Gpu], str]:
    gpu_filter, gpus = _listed_gpus(query)
    return gpu_filter, gpus, render_to_string("catalog/_gpu_rows.html", {"gpus": gpus})


# The unfiltered list under each single sort order: the landing page, asked far more often
# than anything else. Kept per process while the catalogue is unchanged; the key is one of a
# few dozen orderings, so no query string can grow it.
_unfiltered_rows = CatalogueSnapshot(
    lambda ordering: _rendered_rows(QueryDict(urlencode({"ordering": ordering})))[1:]
)
_SORT_KEYS = {""} | {
    prefix + field
    for field in (*GpuFilter.base_filters["ordering"].param_map, *PRICE_ORDERINGS)
    for prefix in ("", "-")
}


def gpu_list_page(request: HttpRequest) -> HttpResponse:
    query = request.GET
    ordering = query.get("ordering", "")
    unfiltered = set(query) <= {"ordering"} and len(query.getlist("ordering")) <= 1
    if unfiltered and ordering in _SORT_KEYS:
        gpu_filter = GpuFilter(query, queryset=gpu_list())
        gpus, rows_html = _unfiltered_rows.get(ordering)
    else:
        gpu_filter, gpus, rows_html = _rendered_rows(query)
    return render(
        request,
        "catalog/gpu_list.html",
        {
            "filter": gpu_filter,
            "gpus": gpus,
            "rows_html": rows_html,
            "ordering": ordering,
        },
    )


def gpu_compare_page(request: HttpRequest) -> HttpResponse:
    """GPUs side by side; the URL names them (`?gpu=H100-SXM&gpu=MI300X`), so it can be shared."""
    compared = gpus_compared(request.GET.getlist("gpu"))
    return render(
        request,
        "catalog/gpu_compare.html",
        {
            "gpus": compared.gpus,
            "errors": compared.errors,
            "rows": comparison_rows(compared.gpus),
            "max_gpus": COMPARE_MAX_GPUS,
        },
        status=400 if compared.errors else 200,
    )


def gpu_detail_page(request: HttpRequest, canonical_key: str) -> HttpResponse:
    """Offers grouped by provider and paged by provider; `?all=1` lists every offer flat."""
    gpu = get_object_or_404(Gpu, canonical_key=canonical_key)
    offers = list(gpu_offers_list(gpu=gpu))
    show_all = request.GET.get("all") == "1"
    groups = group_offers_by_provider(offers, rows_per_provider=ROWS_PER_PROVIDER)
    provider_page = Paginator(groups, PROVIDERS_PER_PAGE).get_page(request.GET.get("page"))
    reserved_shown = any(group.has_reserved for group in groups)
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
            "reserved_shown": reserved_shown,
            # Instance, region, GPUs, four on-demand and spot prices; two reserved ones.
            "column_count": 9 if reserved_shown else 7,
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
    offers = _filtered(offer_filter)
    page = Paginator(offers_merged_by_zone(offers), OFFERS_PER_PAGE).get_page(
        request.GET.get("page")
    )
    page.object_list = offers_with_zones(rows=page.object_list)
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "catalog/offer_list.html",
        {
            "filter": offer_filter,
            "page": page,
            "offer_count": offers.count(),
            "query": query.urlencode(),
            **refresh_status(),
        },
    )
