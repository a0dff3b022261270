"""Reads of the catalogue. Keyword-only, typed, named <thing>_<verb>."""

from decimal import Decimal

from django.db.models import Count, Min, QuerySet

from catalog.models import Gpu, Offer


def gpu_memory_gib_by_key() -> dict[str, Decimal]:
    return dict(Gpu.objects.values_list("canonical_key", "memory_gib"))


def gpu_list() -> QuerySet[Gpu]:
    """GPUs with how many offers they have and their cheapest per-GPU-hour price."""
    return Gpu.objects.annotate(
        offer_count=Count("offers"), min_usd_per_gpu_hour=Min("offers__usd_per_gpu_hour")
    )


def offer_list() -> QuerySet[Offer]:
    return Offer.objects.select_related("gpu", "provider")


def gpu_offers_list(*, gpu: Gpu) -> QuerySet[Offer]:
    return offer_list().filter(gpu=gpu).order_by("usd_per_gpu_hour", "provider__name", "id")
