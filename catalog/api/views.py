from rest_framework import viewsets
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request

from catalog.api.serializers import GpuSerializer, OfferSerializer
from catalog.filters import GpuFilter, OfferFilter
from catalog.selectors import gpu_list, offer_list


class CatalogPagination(PageNumberPagination):
    """`page_size` is a whole number from 1 (larger ones give the largest page); anything
    else is a 400, where DRF would silently fall back to the default size."""

    page_size_query_param = "page_size"
    max_page_size = 500

    def get_page_size(self, request: Request) -> int:
        raw = request.query_params.get(self.page_size_query_param, "")
        if raw == "":
            return self.page_size
        try:
            size = int(raw)
        except ValueError:
            size = 0
        if size < 1:
            raise ValidationError({self.page_size_query_param: ["Must be a whole number from 1."]})
        return min(size, self.max_page_size)

    def get_schema_operation_parameters(self, view) -> list[dict]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["description"] = (
                    f"Rows per page (default {self.page_size}); larger than "
                    f"{self.max_page_size} gives {self.max_page_size}."
                )
        return parameters


class GpuViewSet(viewsets.ReadOnlyModelViewSet):
    """GPUs with datasheet specs. Memory in GiB, bandwidth in decimal GB/s, dense TFLOPS."""

    serializer_class = GpuSerializer
    filterset_class = GpuFilter
    lookup_field = "canonical_key"
    pagination_class = CatalogPagination

    def get_queryset(self):
        return gpu_list().prefetch_related("mig_profiles").order_by("vendor", "-memory_gib", "name")


class OfferViewSet(viewsets.ReadOnlyModelViewSet):
    """Cloud instance offers with their current price; per-GPU-hour price is derived."""

    serializer_class = OfferSerializer
    filterset_class = OfferFilter
    pagination_class = CatalogPagination

    def get_queryset(self):
        return offer_list().order_by("usd_per_gpu_hour", "id")
