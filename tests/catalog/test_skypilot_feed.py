"""The SkyPilot vms.csv parser, on the real bundled extracts and on hand-made rows."""

import csv
from decimal import Decimal
from pathlib import Path

import pytest

from catalog.domain.quotes import PricingModel
from catalog.feeds.skypilot import parse_vms_csv
from catalog.services import BUNDLED_DATA_DIR

SKYPILOT_DIR = BUNDLED_DATA_DIR / "skypilot"
NORMALIZED = Path(__file__).parent.parent / "fixtures" / "skypilot_normalized_offers.csv"


def parse_file(provider: str, name: str):
    with (SKYPILOT_DIR / name).open(newline="") as feed:
        return parse_vms_csv(feed, provider=provider, source="test")


def parse_text(provider: str, text: str):
    return parse_vms_csv(text.splitlines(keepends=True), provider=provider, source="test")


@pytest.mark.parametrize(
    ("provider", "name"),
    [
        ("lambda", "lambda_vms.csv"),
        ("verda", "verda_vms.csv"),
        ("nebius", "nebius_vms.csv"),
        ("vast", "vast_vms.csv"),
        ("hyperstack", "hyperstack_vms.csv"),
        ("jarvislabs", "jarvislabs_vms.csv"),
        ("aws", "aws_vms.GPU_PARTIAL.csv"),
        ("cudo", "cudo_vms.PARTIAL.csv"),
    ],
)
def test_prices_agree_with_an_independent_normalisation_whatever_the_column_order(provider, name):
    expected = {}
    with NORMALIZED.open(newline="") as normalized:
        for row in csv.DictReader(normalized):
            if row["cloud"] != provider or not row["price_usd_h"] or not row["accelerator"]:
                continue
            key = (row["instance_type"], row["region"], row["zone"])
            expected[key] = Decimal(row["price_usd_h"]).quantize(Decimal("0.000001"))
    parsed = {
        (q.instance_type, q.region, q.zone): q.usd_per_hour
        for q in parse_file(provider, name).quotes
        if q.pricing_model == PricingModel.ON_DEMAND
    }
    assert parsed == expected


def test_every_row_is_either_a_quote_or_skipped_with_a_reason():
    with (SKYPILOT_DIR / "lambda_vms.csv").open() as feed:
        data_rows = sum(1 for _ in feed) - 1
    result = parse_file("lambda", "lambda_vms.csv")
    rows_with_quotes = {(q.instance_type, q.region) for q in result.quotes}
    assert len(rows_with_quotes) + len(result.skipped) == data_rows
    assert all(skipped.reason for skipped in result.skipped)


def test_gcp_offer_price_is_host_vm_plus_gpu_rows():
    result = parse_file("gcp", "gcp_vms.GPU_PARTIAL.csv")
    by_key = {(q.instance_type, q.zone, q.pricing_model): q for q in result.quotes}
    on_demand = by_key[("a2-highgpu-1g", "asia-northeast1-a", PricingModel.ON_DEMAND)]
    spot = by_key[("a2-highgpu-1g", "asia-northeast1-a", PricingModel.SPOT)]
    # Host row 0.94803 / 0.41783 plus the 1x A100 row 1.70586 / 1.2307 in the same zone.
    assert on_demand.usd_per_hour == Decimal("2.653890")
    assert spot.usd_per_hour == Decimal("1.648530")
    assert (on_demand.accelerator_name, on_demand.gpu_count) == ("A100", 1)
    assert on_demand.vcpus == Decimal("12.0")
    assert on_demand.gpu_memory_gib == Decimal(40)


def test_gcp_rows_that_cannot_be_paired_are_reported():
    result = parse_file("gcp", "gcp_vms.GPU_PARTIAL.csv")
    reasons = {skipped.reason for skipped in result.skipped}
    assert "GCP host VM without a matching GPU price row in this extract" in reasons
    assert any("without a host VM row" in reason for reason in reasons)


HEADER = (
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region\n"
)


def test_700_and_zero_mean_no_price():
    result = parse_text(
        "vast",
        HEADER + "a,H100,1,8,64,,700.0,0.00,eu\n" + "b,H100,1,8,64,,2.5,0,eu\n",
    )
    assert [(q.instance_type, q.pricing_model, q.usd_per_hour) for q in result.quotes] == [
        ("b", PricingModel.ON_DEMAND, Decimal("2.500000"))
    ]
    assert [s.reason for s in result.skipped] == ["no price (empty, 0 or 700.0)"]


def test_gpu_info_in_json_and_python_literal_forms_give_per_gpu_memory():
    python_literal = (
        "\"{'Gpus': [{'Name': 'H100', 'Manufacturer': None, 'Count': 2, "
        "'MemoryInfo': {'SizeInMiB': 81920}}]}\""
    )
    json_form = (
        '"{""Gpus"": [{""Name"": ""H100"", ""Count"": 2, ""MemoryInfo"": {""SizeInMiB"": 81920}}]}"'
    )
    for info in (python_literal, json_form):
        (quote,) = parse_text("lambda", HEADER + f"a,H100,2,8,64,{info},5.0,,us\n").quotes
        assert quote.gpu_memory_gib == Decimal(80)
        assert quote.gpu_description == "H100"


def test_vast_memory_field_is_the_total_over_all_gpus():
    info = "\"{'Gpus': [{'Name': 'H200', 'Count': 2, 'MemoryInfo': {'SizeInMiB': 287542}}]}\""
    (quote,) = parse_text("vast", HEADER + f"2x,H200,2,32,64,{info},5.18,,us\n").quotes
    assert quote.gpu_memory_gib == Decimal(287542) / 2 / 1024


def test_runpod_memory_field_holding_gigabytes_is_read_as_such():
    info = "\"{'Gpus': [{'Name': 'A100 PCIe', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 80}}]}\""
    (quote,) = parse_text("runpod", HEADER + f"1x,A100-80GB,1,8,117,{info},1.39,,IN\n").quotes
    assert quote.gpu_memory_gib == Decimal(80)


def test_a_spot_price_equal_to_on_demand_is_not_loaded_as_spot():
    result = parse_text("runpod", HEADER + "1x,A100-80GB,1,8,117,,1.39,1.39,IN\n")
    assert [q.pricing_model for q in result.quotes] == [PricingModel.ON_DEMAND]
    assert "spot price equals on-demand" in result.skipped[0].reason


def test_cpu_only_and_fractional_gpu_rows_are_skipped_with_reasons():
    result = parse_text("lambda", HEADER + "cpu,,,4,16,,0.2,,us\nhalf,A10,0.5,4,16,,0.4,,us\n")
    assert result.quotes == []
    assert [s.reason.split(" (")[0] for s in result.skipped] == [
        "no accelerator",
        "fractional GPU count 0.5",
    ]


def test_float_noise_in_prices_is_rounded_to_a_millionth_of_a_dollar():
    (quote,) = parse_text("cudo", HEADER + "a,A40,1,2,4,,0.36979999999999996,,ca\n").quotes
    assert quote.usd_per_hour == Decimal("0.369800")
