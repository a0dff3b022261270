from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django_filters import FilterSet

from catalog.filters import GpuFilter, OfferFilter
from catalog.models import Gpu
from catalog.selectors import gpu_list, gpu_offers_list, offer_list

OFFERS_PER_PAGE = 50
GPU_PAGE_OFFER_LIMIT = 100


def _filtered(filterset: FilterSet) -> QuerySet:
    """Invalid filter values show their errors and no rows, rather than being ignored."""
    return filterset.qs if filterset.is_valid() else filterset.queryset.none()


def gpu_list_page(request: HttpRequest) -> HttpResponse:
    gpu_filter = GpuFilter(request.GET, queryset=gpu_list())
    return render(
        request,
        "catalog/gpu_list.html",
        {
            "filter": gpu_filter,
            "gpus": _filtered(gpu_filter),
            "ordering": request.GET.get("ordering", ""),
        },
    )


def gpu_detail_page(request: HttpRequest, canonical_key: str) -> HttpResponse:
    gpu = get_object_or_404(Gpu, canonical_key=canonical_key)
    offers = gpu_offers_list(gpu=gpu)
    return render(
        request,
        "catalog/gpu_detail.html",
        {
            "gpu": gpu,
            "offers": offers[:GPU_PAGE_OFFER_LIMIT],
            "offer_count": offers.count(),
            "offer_limit": GPU_PAGE_OFFER_LIMIT,
        },
    )


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
        {"filter": offer_filter, "page": page, "query": query.urlencode()},
    )
