"""One FilterSet per list, shared by the REST API and the HTML pages."""

import django_filters as filters
from django import forms
from django_filters import fields as filter_fields
from drf_spectacular.utils import extend_schema_field

from catalog.models import PRICING_MODEL_CHOICES, Gpu, Offer, Provider, ProviderKind, Vendor


class StableOrderingFilter(filters.OrderingFilter):
    """Sorts by the chosen fields, then by id: without a tie-breaker PostgreSQL may return tied
    rows in a different order on each page, so paging would repeat some rows and skip others."""

    def filter(self, qs, value):
        qs = super().filter(qs, value)
        return qs.order_by(*qs.query.order_by, "id") if value else qs


class IntegerFilter(filters.NumberFilter):
    """A whole number: 1.5 GPUs is an error, not silently 1."""

    field_class = forms.IntegerField


@extend_schema_field(
    {"type": "boolean", "description": "true or false; any other value is a 400 that says why."}
)
class StrictBooleanFilter(filters.TypedChoiceFilter):
    """true / false (empty: either); anything else is an error rather than silently ignored.

    The schema says boolean: django-filter's choices would otherwise document the strings as
    the enum of a boolean, which no client can send."""


class AnyCaseChoiceField(filter_fields.ChoiceField):
    """A choice matched whatever its case (?vendor=google is Google); the value kept is the
    choice as listed."""

    def to_python(self, value):
        value = super().to_python(value)
        by_folded = {str(key).casefold(): key for key, _ in self.choices}
        return by_folded.get(value.casefold(), value)


class AnyCaseChoiceFilter(filters.ChoiceFilter):
    field_class = AnyCaseChoiceField

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("empty_label", "any")
        super().__init__(*args, **kwargs)


class AnyCaseModelChoiceField(filter_fields.ModelChoiceField):
    """A row found by its key whatever the case (?gpu=h100-sxm is H100-SXM)."""

    def to_python(self, value):
        if value in self.empty_values:
            return None
        key = self.to_field_name or "pk"
        try:
            return self.queryset.get(**{f"{key}__iexact": str(value)})
        except (self.queryset.model.DoesNotExist, self.queryset.model.MultipleObjectsReturned):
            raise forms.ValidationError(
                self.error_messages["invalid_choice"], code="invalid_choice"
            ) from None


class AnyCaseModelChoiceFilter(filters.ModelChoiceFilter):
    field_class = AnyCaseModelChoiceField

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("empty_label", "any")
        super().__init__(*args, **kwargs)


def strict_boolean_filter(label: str) -> StrictBooleanFilter:
    return StrictBooleanFilter(
        choices=[("", "any"), ("true", "yes"), ("false", "no")],
        coerce=lambda value: value == "true",
        empty_value=None,
        label=label,
    )


class GpuFilter(filters.FilterSet):
    vendor = AnyCaseChoiceFilter(choices=Vendor.choices)
    name = filters.CharFilter(field_name="name", lookup_expr="icontains", label="Name contains")
    architecture = filters.CharFilter(lookup_expr="iexact")
    min_memory_gib = filters.NumberFilter(
        field_name="memory_gib", lookup_expr="gte", min_value=0, label="Min. memory (GiB)"
    )
    supports_tf32 = strict_boolean_filter("TF32")
    supports_bf16 = strict_boolean_filter("BF16")
    supports_fp8 = strict_boolean_filter("FP8")
    ordering = StableOrderingFilter(
        fields=(
            ("name", "name"),
            ("vendor", "vendor"),
            ("memory_gib", "memory_gib"),
            ("memory_bandwidth_gb_s", "memory_bandwidth_gb_s"),
            ("bf16_tflops_dense", "bf16_tflops_dense"),
            ("fp16_tflops_dense", "fp16_tflops_dense"),
            ("fp8_tflops_dense", "fp8_tflops_dense"),
            ("tdp_watts", "tdp_watts"),
            ("release_year", "release_year"),
        )
    )

    class Meta:
        model = Gpu
        fields = [
            "vendor",
            "name",
            "architecture",
            "supports_tf32",
            "supports_bf16",
            "supports_fp8",
        ]


class OfferFilter(filters.FilterSet):
    gpu = AnyCaseModelChoiceFilter(
        queryset=Gpu.objects.all(), to_field_name="canonical_key", label="GPU"
    )
    vendor = AnyCaseChoiceFilter(field_name="gpu__vendor", choices=Vendor.choices, label="Vendor")
    provider = AnyCaseModelChoiceFilter(queryset=Provider.objects.all(), to_field_name="key")
    provider_kind = AnyCaseChoiceFilter(
        field_name="provider__kind", choices=ProviderKind.choices, label="Provider kind"
    )
    region = filters.CharFilter(lookup_expr="iexact")
    pricing_model = AnyCaseChoiceFilter(choices=PRICING_MODEL_CHOICES)
    gpu_count = IntegerFilter(min_value=1, max_value=64, label="GPUs per instance")
    min_gpu_memory_gib = filters.NumberFilter(
        field_name="gpu__memory_gib", lookup_expr="gte", min_value=0, label="Min. GPU memory (GiB)"
    )
    max_usd_per_hour = filters.NumberFilter(
        field_name="usd_per_hour", lookup_expr="lte", min_value=0, label="Max. $/hour"
    )
    max_usd_per_gpu_hour = filters.NumberFilter(
        field_name="usd_per_gpu_hour", lookup_expr="lte", min_value=0, label="Max. $/GPU-hour"
    )
    ordering = StableOrderingFilter(
        fields=(
            ("usd_per_hour", "usd_per_hour"),
            ("usd_per_gpu_hour", "usd_per_gpu_hour"),
            ("gpu_count", "gpu_count"),
            ("gpu__memory_gib", "gpu_memory_gib"),
        )
    )

    class Meta:
        model = Offer
        fields = [
            "gpu",
            "vendor",
            "provider",
            "provider_kind",
            "region",
            "pricing_model",
            "gpu_count",
        ]
