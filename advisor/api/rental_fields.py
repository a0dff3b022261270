"""The sizing request's fields for where a team can rent and how much of the answer to list:
validated against the catalogue (a provider key or a region prefix it does not know is a 400
naming the ones it does)."""

from rest_framework import serializers

from advisor.domain.sizing.rental import MAX_CLUSTER_GPUS, MAX_GPUS
from advisor.domain.sizing.report import DEFAULT_MAX_CANDIDATES
from advisor.selectors import rental_vocabulary_get
from config.api_fields import StringField


class RentalAndAnswerFields(serializers.Serializer):
    providers = serializers.ListField(
        child=StringField(max_length=40),
        default=list,
        max_length=50,
        help_text="Only offers of these providers (their keys, as the offers API lists them). "
        "Empty: every provider.",
    )
    exclude_providers = serializers.ListField(
        child=StringField(max_length=40),
        default=list,
        max_length=50,
        help_text="No offers of these providers.",
    )
    regions = serializers.ListField(
        child=StringField(max_length=60),
        default=list,
        max_length=20,
        help_text="Only offers whose region starts with one of these prefixes (us-, europe-, "
        "eastus...), any case. Empty: any region.",
    )
    exclude_marketplaces = serializers.BooleanField(
        default=False,
        help_text="No offers of marketplaces, where hosts set the prices (Vast.ai, Hyperbolic).",
    )
    max_gpus = serializers.IntegerField(
        default=MAX_GPUS,
        min_value=1,
        max_value=MAX_CLUSTER_GPUS,
        help_text=f"At most this many GPUs: up to {MAX_GPUS} (one instance) to serve, up to "
        f"{MAX_CLUSTER_GPUS:,} across nodes to train (powers of two beyond {MAX_GPUS}).",
    )
    max_candidates = serializers.IntegerField(
        default=DEFAULT_MAX_CANDIDATES,
        min_value=0,
        max_value=10_000,
        help_text=f"The answer lists this many candidates that run, ranked (default "
        f"{DEFAULT_MAX_CANDIDATES}; 0 for all).",
    )
    other_stacks = serializers.BooleanField(
        default=False,
        help_text="Where the stack does not run, rank another stack's candidates beside its own "
        "(vLLM's TPU, Gaudi or Neuron plugins, Gaudi's Trainer, PyTorch/XLA...); listed apart in "
        "with_other_stacks otherwise.",
    )
    include_rejected = serializers.BooleanField(
        default=False,
        help_text="List the candidates that do not run too (after the ones that do); "
        "rejected_summary counts them by reason either way.",
    )

    def validate_providers(self, value: list[str]) -> tuple[str, ...]:
        return self._known_providers(value)

    def validate_exclude_providers(self, value: list[str]) -> tuple[str, ...]:
        return self._known_providers(value)

    @staticmethod
    def _known_providers(value: list[str]) -> tuple[str, ...]:
        keys = tuple(dict.fromkeys(key.strip().lower() for key in value if key.strip()))
        if not keys:
            return ()
        known = rental_vocabulary_get().provider_keys
        unknown = [key for key in keys if key not in known]
        if unknown:
            raise serializers.ValidationError(
                f"unknown provider {', '.join(map(repr, unknown))}: known providers are "
                f"{', '.join(known)}"
            )
        return keys

    def validate_regions(self, value: list[str]) -> tuple[str, ...]:
        prefixes = tuple(dict.fromkeys(p.strip().lower() for p in value if p.strip()))
        if not prefixes:
            return ()
        vocabulary = rental_vocabulary_get()
        unmatched = [p for p in prefixes if not any(r.startswith(p) for r in vocabulary.regions)]
        if unmatched:
            raise serializers.ValidationError(
                f"no offer's region starts with {', '.join(map(repr, unmatched))}: regions "
                f"start with {', '.join(vocabulary.region_families())} (and more, e.g. eastus)"
            )
        return prefixes
