"""The advisor's window on the catalogue: GPUs and offers as the domain's Device and Offer.

Rows are read by field name (values() dicts), so reordering a column list cannot swap two
figures silently.
"""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from advisor.domain.devices import Device, MigProfile, Offer
from catalog.domain.freshness import offer_freshness
from catalog.domain.pricing_urls import pricing_url
from catalog.models import Gpu, Provider
from catalog.models import MigProfile as MigProfileRow
from catalog.models import Offer as OfferRow
from catalog.snapshots import CatalogueSnapshot


def _float(value: Decimal | float | None) -> float | None:
    return None if value is None else float(value)


def _mig_profiles_by_gpu() -> dict[str, tuple[MigProfile, ...]]:
    profiles: dict[str, list[MigProfile]] = defaultdict(list)
    for row in MigProfileRow.objects.order_by("memory_gib", "compute_slices", "profile").values(
        "gpu__canonical_key",
        "profile",
        "compute_slices",
        "compute_slices_total",
        "memory_fraction",
        "memory_gib",
        "max_count",
    ):
        profiles[row["gpu__canonical_key"]].append(
            MigProfile(
                name=row["profile"],
                compute_fraction=row["compute_slices"] / row["compute_slices_total"],
                memory_fraction=float(row["memory_fraction"]),
                memory_gib=float(row["memory_gib"]),
                max_count=row["max_count"],
            )
        )
    return {key: tuple(rows) for key, rows in profiles.items()}


def device_list() -> list[Device]:
    """Every catalogue GPU, by name, with its MIG profiles."""
    mig_profiles = _mig_profiles_by_gpu()
    return [
        Device(
            key=row["canonical_key"],
            name=row["name"],
            vendor=row["vendor"],
            memory_gib=float(row["memory_gib"]),
            bandwidth_gb_s=float(row["memory_bandwidth_gb_s"]),
            fp32_tflops=_float(row["fp32_tflops"]),
            tf32_tflops=_float(row["tf32_tflops_dense"]),
            bf16_tflops=_float(row["bf16_tflops_dense"]),
            fp16_tflops=_float(row["fp16_tflops_dense"]),
            fp8_tflops=_float(row["fp8_tflops_dense"]),
            int8_tops=_float(row["int8_tops_dense"]),
            supports_tf32=row["supports_tf32"],
            supports_bf16=row["supports_bf16"],
            supports_fp8=row["supports_fp8"],
            interconnect=row["interconnect"],
            interconnect_gb_s=_float(row["interconnect_gb_s"]),
            mig_profiles=mig_profiles.get(row["canonical_key"], ()),
            architecture=row["architecture"],
            fp64_tflops=_float(row["fp64_tflops"]),
            confidence=row["confidence"],
            spec_notes=row["notes"],
            visible_memory_mib=row["visible_memory_mib"],
            tdp_watts=row["tdp_watts"],
        )
        for row in Gpu.objects.order_by("name").values(
            "canonical_key",
            "name",
            "vendor",
            "memory_gib",
            "memory_bandwidth_gb_s",
            "fp32_tflops",
            "tf32_tflops_dense",
            "bf16_tflops_dense",
            "fp16_tflops_dense",
            "fp8_tflops_dense",
            "int8_tops_dense",
            "supports_tf32",
            "supports_bf16",
            "supports_fp8",
            "interconnect",
            "interconnect_gb_s",
            "architecture",
            "fp64_tflops",
            "confidence",
            "notes",
            "visible_memory_mib",
            "tdp_watts",
        )
    ]


def device_offers_list(*, pricing_model: str) -> dict[str, list[Offer]]:
    """The offers at one pricing model, by the canonical key of their GPU, with their
    provider's kind and pricing page and their freshness."""
    offers: dict[str, list[Offer]] = defaultdict(list)
    # Tuples, not dicts: this reads every offer of a pricing model (~6,000) after each
    # catalogue write.
    rows = (
        OfferRow.objects.filter(pricing_model=pricing_model)
        .with_freshness()
        .values_list(
            "gpu__canonical_key",
            "provider__key",
            "provider__name",
            "provider__kind",
            "provider__pricing_url_template",
            "instance_type",
            "region",
            "gpu_count",
            "usd_per_hour",
            "price_observed_at",
            "delisted",
            "listed_by_source",
        )
    )
    for (
        gpu_key,
        provider_key,
        provider_name,
        provider_kind,
        pricing_url_template,
        instance_type,
        region,
        gpu_count,
        usd_per_hour,
        price_observed_at,
        delisted,
        listed_by_source,
    ) in rows:
        offers[gpu_key].append(
            Offer(
                provider=provider_key,
                provider_name=provider_name,
                instance_type=instance_type,
                region=region,
                gpu_count=gpu_count,
                usd_per_hour=float(usd_per_hour),
                pricing_model=pricing_model,
                provider_kind=provider_kind,
                freshness=offer_freshness(listed_by_source=listed_by_source, delisted=delisted),
                price_observed_at=price_observed_at,
                pricing_url=pricing_url(pricing_url_template, instance_type),
            )
        )
    return offers


def _catalogue_read(pricing_model: str) -> tuple[list[Device], dict[str, list[Offer]]]:
    return device_list(), device_offers_list(pricing_model=pricing_model)


# This process's copy of the catalogue as the advisor sees it, per pricing model: reading the
# ~6,000 offers of one pricing model costs several times the sizing itself.
_snapshot = CatalogueSnapshot(_catalogue_read)


def catalogue_snapshot_get(*, pricing_model: str) -> tuple[list[Device], dict[str, list[Offer]]]:
    """device_list() and device_offers_list(), reused while the catalogue version is unchanged."""
    return _snapshot.get(pricing_model)


def catalogue_offers_get(
    *, pricing_models: Sequence[str]
) -> tuple[list[Device], dict[str, list[Offer]]]:
    """The devices and, by GPU key, the offers of every one of `pricing_models` together, each
    offer saying its own (from catalogue_snapshot_get)."""
    devices: list[Device] = []
    offers: dict[str, list[Offer]] = defaultdict(list)
    for pricing_model in pricing_models:
        devices, by_device = catalogue_snapshot_get(pricing_model=pricing_model)
        for key, rows in by_device.items():
            offers[key].extend(rows)
    return devices, dict(offers)


@dataclass(frozen=True)
class RentalVocabulary:
    """What a sizing request may name: the catalogue's provider keys and offer regions."""

    provider_keys: tuple[str, ...]
    regions: tuple[str, ...]  # lower case

    def region_families(self) -> list[str]:
        """The regions' first parts ("us-", "europe-"), for a message naming the known ones."""
        return sorted({region.split("-")[0] + "-" for region in self.regions if "-" in region})


def _rental_vocabulary_read(_key: object) -> RentalVocabulary:
    return RentalVocabulary(
        provider_keys=tuple(Provider.objects.order_by("key").values_list("key", flat=True)),
        regions=tuple(
            sorted({region.lower() for region in OfferRow.objects.values_list("region", flat=True)})
        ),
    )


_vocabulary = CatalogueSnapshot(_rental_vocabulary_read)


def rental_vocabulary_get() -> RentalVocabulary:
    """The provider keys and regions, reused while the catalogue version is unchanged."""
    return _vocabulary.get()
