"""The request's `ownership` object: overrides of the rent-against-buy inputs, each optional
(advisor/domain/planning/ownership.py holds the defaults and their sources)."""

from typing import Any

from rest_framework import serializers

from advisor.domain.planning.ownership import OwnershipInputs
from config.api_fields import JsonTypesMixin, KnownFieldsMixin

# Bounds that keep an override a cost a team could face; outside them it is a typo.
MAX_DEPRECIATION_YEARS = 10
MAX_PUE = 3.0
MAX_USD_PER_KWH = 2.0
MAX_HOSTING_USD_PER_KW_MONTH = 5_000
MAX_HOSTING_USD_PER_GPU_MONTH = 50_000
MAX_SERVER_SHARE_FRACTION = 5.0
MAX_SERVER_SHARE_USD = 1_000_000
# A GPU busy 1% of its hours is the least a TCO per used hour is stated at.
UTILIZATION_FLOOR = 0.01


def _number(low: float, high: float, what: str) -> serializers.FloatField:
    return serializers.FloatField(required=False, min_value=low, max_value=high, help_text=what)


class OwnershipSerializer(KnownFieldsMixin, JsonTypesMixin, serializers.Serializer):
    depreciation_years = _number(
        1, MAX_DEPRECIATION_YEARS, "Years the purchase is spread over (default 4)."
    )
    server_share_fraction = _number(
        0,
        MAX_SERVER_SHARE_FRACTION,
        "The server around each GPU (chassis, CPUs, RAM, NICs, storage) as a share of the "
        "GPU's price (default 0.32).",
    )
    server_share_usd = _number(
        0, MAX_SERVER_SHARE_USD, "The server around each GPU in USD, instead of the fraction."
    )
    pue = _number(1, MAX_PUE, "Power usage effectiveness of the facility (default 1.58).")
    usd_per_kwh = _number(0, MAX_USD_PER_KWH, "Electricity, USD per kWh (default 0.0895).")
    hosting_usd_per_kw_month = _number(
        0,
        MAX_HOSTING_USD_PER_KW_MONTH,
        "Colocation, USD per kW of the GPU's TDP a month (default 184.06).",
    )
    hosting_usd_per_gpu_month = _number(
        0, MAX_HOSTING_USD_PER_GPU_MONTH, "Hosting per GPU a month, instead of the per-kW rate."
    )
    utilization = _number(
        UTILIZATION_FLOOR, 1, "The share of hours the GPUs work, for the TCO (default 0.6)."
    )

    def validate(self, attrs: dict[str, Any]) -> OwnershipInputs:
        for one, other in (
            ("server_share_fraction", "server_share_usd"),
            ("hosting_usd_per_kw_month", "hosting_usd_per_gpu_month"),
        ):
            if one in attrs and other in attrs:
                raise serializers.ValidationError({other: [f"Give {one} or {other}, not both."]})
        return OwnershipInputs.with_overrides(**attrs)

    def to_representation(self, instance: Any) -> Any:
        return instance


def ownership_field() -> OwnershipSerializer:
    return OwnershipSerializer(
        required=False,
        help_text="Overrides of the rent-against-buy inputs (rent_vs_buy in the answer); each "
        "omitted one takes its sourced default.",
    )
