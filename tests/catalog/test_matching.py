"""Provider GPU names -> catalogue GPUs, including the traps in shared/data/README.md."""

from decimal import Decimal

import pytest

from catalog.domain.matching import GpuMatcher, parse_alias_rules
from catalog.domain.quotes import PriceQuote, PricingModel
from catalog.domain.specs import parse_gpu_specs
from catalog.services import BUNDLED_DATA_DIR


@pytest.fixture(scope="module")
def matcher() -> GpuMatcher:
    with (BUNDLED_DATA_DIR / "gpus.csv").open() as specs_file:
        specs = parse_gpu_specs(specs_file)
    with (BUNDLED_DATA_DIR / "gpu_aliases.csv").open() as rules_file:
        return GpuMatcher(
            parse_alias_rules(rules_file), {s.canonical_key: s.memory_gib for s in specs}
        )


def quote(
    provider: str,
    accelerator: str,
    instance_type: str = "x",
    memory_gib: str | None = None,
    description: str = "",
) -> PriceQuote:
    return PriceQuote(
        provider=provider,
        instance_type=instance_type,
        region="r",
        zone="",
        accelerator_name=accelerator,
        gpu_count=1,
        pricing_model=PricingModel.ON_DEMAND,
        usd_per_hour=Decimal(1),
        source="test",
        gpu_memory_gib=Decimal(memory_gib) if memory_gib else None,
        gpu_description=description,
    )


@pytest.mark.parametrize(
    ("provider", "accelerator", "instance_type", "expected"),
    [
        ("aws", "A100", "p4d.24xlarge", "A100-40GB-SXM"),
        ("aws", "A100-80GB", "p4de.24xlarge", "A100-80GB-SXM"),
        ("gcp", "A100", "a2-highgpu-1g", "A100-40GB-SXM"),
        ("lambda", "A100-80GB", "gpu_8x_a100_80gb_sxm4", "A100-80GB-SXM"),
        ("fluidstack", "A100-80GB", "A100_PCIE_80GB::1", "A100-80GB-PCIE"),
        ("aws", "H100", "p5.48xlarge", "H100-SXM"),
        ("lambda", "H100", "gpu_1x_h100_pcie", "H100-PCIE"),
        ("lambda", "H100", "gpu_8x_h100_sxm5", "H100-SXM"),
        ("vast", "H100", "1x-H100_NVL-32-65536", "H100-NVL"),
        ("verda", "RTX-6000-Ada", "1RTX6000ADA.10V", "RTX6000Ada"),
        ("lambda", "A6000", "gpu_1x_a6000", "RTXA6000"),
        ("aws", "V100-32GB", "p3dn.24xlarge", "V100-32GB"),
        ("lambda", "V100", "gpu_8x_v100", "V100-16GB"),
    ],
)
def test_provider_spellings_match_the_right_catalogue_gpu(
    matcher, provider, accelerator, instance_type, expected
):
    assert (
        matcher.match("skypilot", quote(provider, accelerator, instance_type)).canonical_key
        == expected
    )


def test_skypilot_a100_is_the_40gb_card_and_a100_80gb_the_80gb_card(matcher):
    assert (
        matcher.match("skypilot", quote("aws", "A100", memory_gib="40")).canonical_key
        == "A100-40GB-SXM"
    )
    assert matcher.match("skypilot", quote("aws", "A100-80GB", memory_gib="80")).canonical_key == (
        "A100-80GB-SXM"
    )


def test_lambda_rtx6000_is_not_the_rtx_6000_ada(matcher):
    match = matcher.match("skypilot", quote("lambda", "RTX6000", "gpu_1x_rtx6000"))
    assert match.canonical_key is None
    assert "Turing" in match.reason


def test_runpod_a100_pcie_description_selects_the_pcie_card(matcher):
    match = matcher.match(
        "skypilot", quote("runpod", "A100-80GB", "1x_A100-80GB_SECURE", "80", "A100 PCIe")
    )
    assert match.canonical_key == "A100-80GB-PCIE"


def test_a_memory_size_the_datasheet_disagrees_with_is_refused_not_guessed(matcher):
    match = matcher.match("skypilot", quote("vast", "RTX4090", "1x-RTX_4090", memory_gib="48"))
    assert match.canonical_key is None
    assert "48.0 GiB" in match.reason


def test_an_h100_whose_form_factor_the_provider_does_not_state_is_reported(matcher):
    match = matcher.match("skypilot", quote("paperspace", "H100", "H100"))
    assert match.canonical_key is None
    assert "form factor" in match.reason


def test_an_unknown_name_is_reported_with_the_provider(matcher):
    match = matcher.match("skypilot", quote("vast", "RTX3060"))
    assert match.canonical_key is None
    assert match.reason == "no alias rule for 'RTX3060' from vast"


def test_rules_pointing_at_a_gpu_the_catalogue_lacks_are_refused():
    rules = parse_alias_rules(
        ["source,accelerator,provider,hint_regex,canonical_key,reason\n", "skypilot,X1,,,NOPE,\n"]
    )
    with pytest.raises(ValueError, match="NOPE"):
        GpuMatcher(rules, {"H100-SXM": Decimal(80)})
