from rest_framework import serializers

from catalog.domain.freshness import FRESHNESS_STATES
from catalog.models import Gpu, MigProfile, Offer, ProviderKind


class MigProfileSerializer(serializers.ModelSerializer):
    compute_fraction = serializers.FloatField(read_only=True)

    class Meta:
        model = MigProfile
        fields = [
            "profile",
            "compute_slices",
            "compute_slices_total",
            "compute_fraction",
            "memory_fraction",
            "memory_gib",
            "memory_basis",
            "max_count",
            "confidence",
            "source_url",
            "memory_source_url",
            "notes",
        ]


class GpuSerializer(serializers.ModelSerializer):
    memory_bytes = serializers.IntegerField(read_only=True)
    mig_profiles = MigProfileSerializer(many=True, read_only=True)
    url = serializers.HyperlinkedIdentityField(
        view_name="api:gpu-detail", lookup_field="canonical_key"
    )

    class Meta:
        model = Gpu
        exclude = ["id"]


class OfferSerializer(serializers.ModelSerializer):
    provider = serializers.SlugRelatedField(slug_field="key", read_only=True)
    provider_name = serializers.CharField(source="provider.name", read_only=True)
    gpu = serializers.SlugRelatedField(slug_field="canonical_key", read_only=True)
    gpu_name = serializers.CharField(source="gpu.name", read_only=True)
    gpu_memory_gib = serializers.DecimalField(
        source="gpu.memory_gib", max_digits=8, decimal_places=2, read_only=True
    )
    usd_per_gpu_hour = serializers.FloatField(read_only=True)
    provider_kind = serializers.ChoiceField(
        source="provider.kind", choices=ProviderKind.choices, read_only=True
    )
    freshness = serializers.ChoiceField(
        choices=[(state, state) for state in FRESHNESS_STATES],
        read_only=True,
        help_text=(
            "live: listed by its feed's latest successful refresh; snapshot: from the bundled "
            "snapshot, not refreshed since (price_observed_at is the snapshot's date); stale: a "
            "later successful refresh of its feed no longer lists it (it may have been "
            "withdrawn)."
        ),
    )
    pricing_url = serializers.URLField(
        read_only=True, allow_null=True, help_text="The provider's public pricing page."
    )

    class Meta:
        model = Offer
        fields = [
            "id",
            "provider",
            "provider_name",
            "instance_type",
            "region",
            "zone",
            "gpu",
            "gpu_name",
            "gpu_count",
            "gpu_memory_gib",
            "accelerator_name",
            "vcpus",
            "ram_gib",
            "pricing_model",
            "usd_per_hour",
            "usd_per_gpu_hour",
            "source",
            "price_observed_at",
            "freshness",
            "provider_kind",
            "pricing_url",
        ]
        extra_kwargs = {
            "pricing_model": {
                "help_text": "on_demand and spot are paid by the hour; reserved_1y and "
                "reserved_3y are reservations, paid for the whole term."
            },
            "usd_per_hour": {
                "help_text": "USD per hour of the instance; for a reservation, the hourly "
                "equivalent: the term's price over 8,760 hours a year of the term (the "
                "source note gives the term's total)."
            },
        }
