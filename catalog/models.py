"""Catalogue tables: GPUs (datasheet facts), providers, offers and their price history.

Units are in field names: memory in GiB (2^30 bytes), bandwidth in decimal GB/s, compute in
dense TFLOPS / TOPS, prices in USD per hour.
"""

from fractions import Fraction

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Exists, F, OuterRef, Q
from django.db.models.functions import Cast, Coalesce
from django.urls import reverse
from django.utils import timezone

from catalog.domain.freshness import freshness_note, offer_freshness
from catalog.domain.pricing_urls import pricing_url
from catalog.domain.quotes import HOURS_PER_YEAR, RESERVED_TERM_YEARS, PricingModel
from catalog.domain.specs import GIB, visible_memory_problem

PRICING_MODEL_CHOICES = [
    (PricingModel.ON_DEMAND.value, "on-demand"),
    (PricingModel.SPOT.value, "spot"),
    (PricingModel.RESERVED_1Y.value, "reserved 1 year"),
    (PricingModel.RESERVED_3Y.value, "reserved 3 years"),
]
SPEC_DECIMAL = {"max_digits": 10, "decimal_places": 2, "null": True, "blank": True}


class Vendor(models.TextChoices):
    # Labels as the vendors write their names (the default would title-case "Amd", "Aws").
    NVIDIA = "NVIDIA", "NVIDIA"
    AMD = "AMD", "AMD"
    INTEL = "Intel", "Intel"
    GOOGLE = "Google", "Google"
    AWS = "AWS", "AWS"


class Confidence(models.TextChoices):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class Gpu(models.Model):
    name = models.CharField(max_length=100, unique=True)
    canonical_key = models.SlugField(max_length=40, unique=True)
    vendor = models.CharField(max_length=20, choices=Vendor.choices)
    architecture = models.CharField(max_length=60)
    release_year = models.PositiveSmallIntegerField(null=True, blank=True)
    memory_gib = models.DecimalField(max_digits=8, decimal_places=2)
    memory_type = models.CharField(max_length=40)
    memory_bandwidth_gb_s = models.DecimalField(max_digits=9, decimal_places=1)
    fp64_tflops = models.DecimalField(**SPEC_DECIMAL)
    fp32_tflops = models.DecimalField(**SPEC_DECIMAL)
    tf32_tflops_dense = models.DecimalField(**SPEC_DECIMAL)
    bf16_tflops_dense = models.DecimalField(**SPEC_DECIMAL)
    fp16_tflops_dense = models.DecimalField(**SPEC_DECIMAL)
    fp8_tflops_dense = models.DecimalField(**SPEC_DECIMAL)
    int8_tops_dense = models.DecimalField(**SPEC_DECIMAL)
    supports_tf32 = models.BooleanField(default=False)
    supports_bf16 = models.BooleanField(default=False)
    supports_fp8 = models.BooleanField(default=False)
    tdp_watts = models.PositiveIntegerField(null=True, blank=True)
    form_factor = models.CharField(max_length=100, blank=True)
    interconnect = models.CharField(max_length=100, blank=True)
    interconnect_gb_s = models.DecimalField(**SPEC_DECIMAL)
    mig_max_instances = models.PositiveSmallIntegerField(null=True, blank=True)
    sparsity_halved = models.BooleanField(
        default=False, help_text="The datasheet quoted sparse figures; stored values are halved."
    )
    aliases = models.JSONField(default=list, blank=True, help_text="How providers spell it.")
    confidence = models.CharField(max_length=10, choices=Confidence.choices)
    notes = models.TextField(blank=True)
    source_url = models.URLField(max_length=500, blank=True)
    visible_memory_mib = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="nvidia-smi's total on a real card (MiB); empty when unpublished.",
    )
    visible_memory_source_url = models.URLField(max_length=500, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["vendor", "-memory_gib", "name"]
        constraints = [
            models.CheckConstraint(condition=Q(memory_gib__gt=0), name="gpu_memory_positive"),
            models.CheckConstraint(
                condition=Q(memory_bandwidth_gb_s__gt=0), name="gpu_bandwidth_positive"
            ),
            models.CheckConstraint(
                condition=Q(bf16_tflops_dense__isnull=True) | Q(bf16_tflops_dense__gte=0),
                name="gpu_bf16_tflops_non_negative",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("catalog:gpu-detail", kwargs={"canonical_key": self.canonical_key})

    def clean(self) -> None:
        # Staff edits in the admin are held to the catalogue's rule for the reported total.
        problem = (
            visible_memory_problem(
                self.visible_memory_mib, self.visible_memory_source_url, self.memory_gib
            )
            if self.memory_gib is not None
            else None
        )
        if problem:
            raise ValidationError({"visible_memory_mib": problem})

    @property
    def memory_bytes(self) -> int:
        return int(self.memory_gib * GIB)


class MigProfile(models.Model):
    """One MIG profile of a GPU (`2g.20gb`): its share of the compute and memory, its memory as
    nvidia-smi reports it (or the profile name's GB), and how many one GPU holds."""

    gpu = models.ForeignKey(Gpu, on_delete=models.CASCADE, related_name="mig_profiles")
    profile = models.CharField(max_length=40)
    compute_slices = models.PositiveSmallIntegerField()
    compute_slices_total = models.PositiveSmallIntegerField()
    memory_fraction = models.DecimalField(max_digits=5, decimal_places=4)
    memory_gib = models.DecimalField(max_digits=8, decimal_places=2)
    memory_basis = models.CharField(max_length=20)
    max_count = models.PositiveSmallIntegerField()
    confidence = models.CharField(max_length=10, choices=Confidence.choices)
    source_url = models.URLField(max_length=500)
    memory_source_url = models.URLField(max_length=500, blank=True)
    notes = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["gpu", "memory_gib", "compute_slices", "profile"]
        constraints = [
            models.UniqueConstraint(fields=["gpu", "profile"], name="mig_profile_per_gpu"),
            models.CheckConstraint(condition=Q(memory_gib__gt=0), name="mig_memory_positive"),
            models.CheckConstraint(condition=Q(max_count__gte=1), name="mig_count_positive"),
            models.CheckConstraint(
                condition=Q(compute_slices__lte=F("compute_slices_total")),
                name="mig_compute_slices_within_total",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.gpu} {self.profile}"

    @property
    def compute_fraction(self) -> float:
        return self.compute_slices / self.compute_slices_total

    @property
    def memory_share(self) -> str:
        """The share of the memory slices as NVIDIA's tables print it: 1/8, 1/4, 1/2, Full."""
        share = Fraction(self.memory_fraction).limit_denominator(8)
        return "Full" if share == 1 else str(share)


class CatalogueVersion(models.Model):
    """One row whose token changes with every write to the GPUs, their MIG profiles, the
    providers and the offers, set by database triggers (migration 0006) whatever wrote: the ORM,
    bulk_update, QuerySet.update, the admin, raw SQL, any process. Processes keep their own
    copies of what they read from those tables keyed by it (catalog/snapshots.py)."""

    token = models.BigIntegerField()

    def __str__(self) -> str:
        return f"catalogue version {self.token}"


class ProviderKind(models.TextChoices):
    """What renting there is like (catalog/data/providers.csv says why each is which)."""

    HYPERSCALER = "hyperscaler", "hyperscaler"
    GPU_CLOUD = "gpu_cloud", "GPU cloud"
    MARKETPLACE = "marketplace", "marketplace (hosts set prices)"


class Provider(models.Model):
    key = models.SlugField(max_length=40, unique=True)
    name = models.CharField(max_length=100)
    website = models.URLField(blank=True)
    kind = models.CharField(max_length=20, choices=ProviderKind.choices, blank=True)
    kind_source = models.TextField(blank=True, help_text="Where the kind comes from.")
    # The provider's public pricing page; {family} is an instance type's family (the part
    # before the first dot: p5 of p5.48xlarge), {instance_type} the whole name.
    pricing_url_template = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class OfferQuerySet(models.QuerySet):
    def with_freshness(self) -> "OfferQuerySet":
        """Annotated for Offer.freshness in the same query: `delisted` (a later successful
        refresh covering the provider did not list it) and `listed_by_source`."""
        later = PriceRefresh.covering(OuterRef("provider_id"), after=None).filter(
            pk__gt=Coalesce(OuterRef("listed_by_id"), 0)
        )
        return self.annotate(delisted=Exists(later), listed_by_source=F("listed_by__source"))


class Offer(models.Model):
    """One rentable instance in one place under one pricing model, with its current price."""

    provider = models.ForeignKey(Provider, on_delete=models.PROTECT, related_name="offers")
    instance_type = models.CharField(max_length=100)
    region = models.CharField(max_length=100)
    zone = models.CharField(max_length=100, blank=True)
    gpu = models.ForeignKey(Gpu, on_delete=models.PROTECT, related_name="offers")
    gpu_count = models.PositiveSmallIntegerField()
    accelerator_name = models.CharField(
        max_length=100, help_text="The GPU name as the provider spells it."
    )
    vcpus = models.DecimalField(max_digits=7, decimal_places=1, null=True, blank=True)
    ram_gib = models.DecimalField(max_digits=9, decimal_places=1, null=True, blank=True)
    pricing_model = models.CharField(max_length=20, choices=PRICING_MODEL_CHOICES)
    # Reserved: the hourly equivalent of the term's price, paid for the whole term (the source
    # note says the term's total).
    usd_per_hour = models.DecimalField(max_digits=12, decimal_places=6)
    # Derived by the database so it can never disagree with the price it comes from.
    usd_per_gpu_hour = models.GeneratedField(
        expression=Cast(F("usd_per_hour"), models.FloatField()) / F("gpu_count"),
        output_field=models.FloatField(),
        db_persist=True,
    )
    source = models.CharField(max_length=200, help_text="Where the current price came from.")
    price_observed_at = models.DateTimeField()
    last_seen_at = models.DateTimeField(
        null=True, blank=True, help_text="When a feed last listed this offer."
    )
    listed_by = models.ForeignKey(
        "PriceRefresh",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="listed_offers",
        help_text="The last refresh that listed this offer (its freshness reads it).",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = OfferQuerySet.as_manager()

    class Meta:
        ordering = ["usd_per_gpu_hour", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "instance_type", "region", "zone", "pricing_model"],
                name="offer_natural_key",
            ),
            models.CheckConstraint(condition=Q(gpu_count__gte=1), name="offer_gpu_count_positive"),
            models.CheckConstraint(condition=Q(usd_per_hour__gt=0), name="offer_price_positive"),
            models.CheckConstraint(
                condition=Q(pricing_model__in=[m.value for m in PricingModel]),
                name="offer_pricing_model_valid",
            ),
        ]
        indexes = [
            models.Index(fields=["gpu", "pricing_model"]),
            models.Index(fields=["usd_per_hour"]),
        ]

    def __str__(self) -> str:
        where = f"{self.region}/{self.zone}" if self.zone else self.region
        return f"{self.provider.key} {self.instance_type} {where} ({self.pricing_model})"

    def get_absolute_url(self) -> str:
        return reverse("catalog:offer-detail", kwargs={"offer_id": self.pk})

    @property
    def pricing_url(self) -> str | None:
        return pricing_url(self.provider.pricing_url_template, self.instance_type)

    @property
    def term_years(self) -> int | None:
        """A reservation's term; None for prices paid by the hour."""
        return RESERVED_TERM_YEARS.get(self.pricing_model)

    @property
    def term_hours(self) -> int | None:
        """The hours a reservation's price is spread over (its usd_per_hour is per one)."""
        return self.term_years and self.term_years * HOURS_PER_YEAR

    @property
    def freshness(self) -> str:
        """live, snapshot or stale (catalog/domain/freshness.py). Reads the annotations of
        OfferQuerySet.with_freshness() when the offer came through it, else asks."""
        delisted = getattr(self, "delisted", None)
        if delisted is None:
            delisted = self.later_covering_refreshes().exists()
        listed_by_source = getattr(self, "listed_by_source", None)
        if listed_by_source is None and self.listed_by_id:
            listed_by_source = self.listed_by.source
        return offer_freshness(listed_by_source=listed_by_source, delisted=delisted)

    @property
    def freshness_note(self) -> str:
        return freshness_note(self.freshness, self.price_observed_at)

    def later_covering_refreshes(self) -> "models.QuerySet[PriceRefresh]":
        return PriceRefresh.covering(self.provider_id, after=self.listed_by_id)


class PriceHistory(models.Model):
    """Every price an offer has had, from feeds and from staff edits (who, and the old value)."""

    offer = models.ForeignKey(Offer, on_delete=models.CASCADE, related_name="history")
    usd_per_hour = models.DecimalField(max_digits=12, decimal_places=6)
    previous_usd_per_hour = models.DecimalField(
        max_digits=12, decimal_places=6, null=True, blank=True
    )
    observed_at = models.DateTimeField()
    source = models.CharField(max_length=200)
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    reason = models.TextField(blank=True, help_text="Why a staff member set this price.")

    class Meta:
        ordering = ["-observed_at", "-id"]
        verbose_name_plural = "price history"
        constraints = [
            models.CheckConstraint(condition=Q(usd_per_hour__gt=0), name="history_price_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.offer_id}: ${self.usd_per_hour}/h at {self.observed_at:%Y-%m-%d %H:%M}"


class PriceSource(models.TextChoices):
    BUNDLED = "bundled", "bundled snapshot"
    GPUHUNT = "gpuhunt", "gpuhunt catalogue"
    AZURE = "azure", "Azure Retail Prices API"
    SKYPILOT = "skypilot", "SkyPilot catalogue"
    CSV = "csv", "staff CSV import"


class PriceRefresh(models.Model):
    """One run of one price source: what it saw, what it changed, or why it changed nothing.

    A successful run of a live feed (not the bundled snapshot, not a staff CSV import) lists
    every offer its feed has for the providers it covers (`providers`): an offer of theirs it
    did not list has been withdrawn, as far as anyone can tell (stale)."""

    class Status(models.TextChoices):
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    source = models.CharField(max_length=20, choices=PriceSource.choices)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RUNNING)
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    triggered_by = models.CharField(
        max_length=100, blank=True, help_text="schedule, command or a user"
    )
    seen = models.PositiveIntegerField(default=0)
    accepted = models.PositiveIntegerField(default=0)
    new = models.PositiveIntegerField(default=0)
    changed = models.PositiveIntegerField(default=0)
    unchanged = models.PositiveIntegerField(default=0)
    stale = models.PositiveIntegerField(default=0)
    quarantined = models.PositiveIntegerField(default=0)
    rejected = models.PositiveIntegerField(default=0)
    unmatched = models.PositiveIntegerField(default=0)
    reason = models.TextField(blank=True, help_text="Why the run failed.")
    details = models.JSONField(default=dict, blank=True)
    providers = models.ManyToManyField(
        Provider,
        blank=True,
        related_name="covering_refreshes",
        help_text="Providers whose offers this run listed in full (live feeds only).",
    )

    class Meta:
        ordering = ["-started_at", "-id"]
        verbose_name_plural = "price refreshes"
        constraints = [
            # The lock: at most one running refresh per source, enforced by the database.
            models.UniqueConstraint(
                fields=["source"],
                condition=Q(status="running"),
                name="one_running_refresh_per_source",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_source_display()} {self.started_at:%Y-%m-%d %H:%M} {self.status}"

    @classmethod
    def covering(cls, provider_id, *, after) -> "models.QuerySet[PriceRefresh]":
        """Successful runs covering the provider, later than the refresh `after` (an id or an
        OuterRef; None: any)."""
        runs = cls.objects.filter(status=cls.Status.SUCCEEDED, providers=provider_id)
        return runs if after is None else runs.filter(pk__gt=after)


class QuarantinedPrice(models.Model):
    """A price that moved by more than 3x: held until a person accepts or rejects it."""

    class Decision(models.TextChoices):
        PENDING = "pending"
        ACCEPTED = "accepted"
        REJECTED = "rejected"

    offer = models.ForeignKey(Offer, on_delete=models.CASCADE, related_name="quarantined_prices")
    refresh = models.ForeignKey(PriceRefresh, on_delete=models.CASCADE, related_name="held_prices")
    current_usd_per_hour = models.DecimalField(max_digits=12, decimal_places=6)
    proposed_usd_per_hour = models.DecimalField(max_digits=12, decimal_places=6)
    observed_at = models.DateTimeField()
    source = models.CharField(max_length=200)
    decision = models.CharField(max_length=10, choices=Decision.choices, default=Decision.PENDING)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["decision", "-observed_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(proposed_usd_per_hour__gt=0), name="quarantine_price_positive"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.offer}: ${self.current_usd_per_hour} -> ${self.proposed_usd_per_hour}"

    @property
    def ratio(self) -> float:
        return float(self.proposed_usd_per_hour / self.current_usd_per_hour)
