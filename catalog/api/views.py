from rest_framework import viewsets
from rest_framework.pagination import PageNumberPagination

from catalog.api.serializers import GpuSerializer, OfferSerializer
from catalog.filters import GpuFilter, OfferFilter
from catalog.selectors import gpu_list, offer_list


class CatalogPagination(PageNumberPagination):
    page_size_query_param = "page_size"
    max_page_size = 500


class GpuViewSet(viewsets.ReadOnlyModelViewSet):
    """GPUs with datasheet specs. Memory in GiB, bandwidth in decimal GB/s, dense TFLOPS."""

    serializer_class = GpuSerializer
    filterset_class = GpuFilter
    lookup_field = "canonical_key"
    pagination_class = CatalogPagination

    def get_queryset(self):
        return gpu_list().order_by("vendor", "-memory_gib", "name")


class OfferViewSet(viewsets.ReadOnlyModelViewSet):
    """Cloud instance offers with their current price; per-GPU-hour price is derived."""

    serializer_class = OfferSerializer
    filterset_class = OfferFilter
    pagination_class = CatalogPagination

    def get_queryset(self):
        return offer_list().order_by("usd_per_gpu_hour", "id")
