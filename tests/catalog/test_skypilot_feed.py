"""The SkyPilot vms.csv parser, on the real bundled files and on hand-made rows."""

import csv
import json
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pytest

from catalog.domain.quotes import PricingModel
from catalog.feeds.skypilot import FRACTIONAL_GPU, SAME_PRICE_OTHER_ZONE, parse_vms_csv
from catalog.feeds.skypilot_gcp import GPU_WITHOUT_N1_HOST, N1_HOST_ROW
from catalog.feeds.skypilot_rows import DUPLICATE_ROW, SPOT_EQUALS_ON_DEMAND
from catalog.services import BUNDLED_DATA_DIR

SKYPILOT_DIR = BUNDLED_DATA_DIR / "skypilot"
NORMALIZED = Path(__file__).parent.parent / "fixtures" / "skypilot_normalized_offers.csv"
MANIFEST = json.loads((SKYPILOT_DIR / "manifest.json").read_text())
FILES = {entry["provider"]: entry["file"] for entry in MANIFEST["files"]}


def parse_file(provider: str):
    with (SKYPILOT_DIR / FILES[provider]).open(newline="") as feed:
        return parse_vms_csv(feed, provider=provider, source="test")


def file_rows(provider: str) -> list[dict[str, str]]:
    with (SKYPILOT_DIR / FILES[provider]).open(newline="") as feed:
        return list(csv.DictReader(feed))


def parse_text(provider: str, text: str):
    return parse_vms_csv(text.splitlines(keepends=True), provider=provider, source="test")


def by_offer_key(result) -> dict:
    return {(q.instance_type, q.region, q.zone, q.pricing_model): q for q in result.quotes}


def reasons(result) -> Counter:
    return Counter(skipped.reason for skipped in result.skipped)


@pytest.mark.parametrize(
    "provider", ["lambda", "verda", "nebius", "vast", "hyperstack", "jarvislabs", "aws", "cudo"]
)
def test_prices_agree_with_an_independent_normalisation_whatever_the_column_order(provider):
    expected = {}
    with NORMALIZED.open(newline="") as normalized:
        for row in csv.DictReader(normalized):
            if row["cloud"] != provider or not row["price_usd_h"] or not row["accelerator"]:
                continue
            key = (row["instance_type"], row["region"], row["zone"], PricingModel.ON_DEMAND)
            expected[key] = Decimal(row["price_usd_h"]).quantize(Decimal("0.000001"))
    quotes = by_offer_key(parse_file(provider))
    # The normalisation covers the earlier extracts; the complete files hold every one of them.
    assert expected
    assert {key: quotes[key].usd_per_hour for key in expected if key in quotes} == expected
    assert set(expected) <= set(quotes)


@pytest.mark.parametrize("provider", sorted(FILES))
def test_every_row_of_every_bundled_file_is_read_and_each_skip_has_a_reason(provider):
    result = parse_file(provider)
    assert result.rows_read == len(file_rows(provider))
    assert all(skipped.reason for skipped in result.skipped)
    # One quote per offer: repeated rows and OCI's domains never make two quotes of one offer.
    keys = [(q.instance_type, q.region, q.zone, q.pricing_model) for q in result.quotes]
    assert len(keys) == len(set(keys))


def test_a_plain_file_row_is_either_a_quote_or_skipped():
    result = parse_file("lambda")
    rows_with_quotes = {(q.instance_type, q.region) for q in result.quotes}
    assert len(rows_with_quotes) + len(result.skipped) == result.rows_read


def test_gcp_exact_duplicate_rows_are_counted_and_loaded_once():
    rows = file_rows("gcp")
    repeats = len(rows) - len({tuple(row.values()) for row in rows})
    result = parse_file("gcp")
    assert repeats == reasons(result)[DUPLICATE_ROW] == 154  # as the extract's README says
    duplicates = [s for s in result.skipped if s.reason == DUPLICATE_ROW]
    assert all(s.detail.startswith("repeats line ") for s in duplicates)


def test_gcp_a2_offer_price_is_host_vm_plus_gpu_rows():
    quotes = by_offer_key(parse_file("gcp"))
    on_demand = quotes[("a2-highgpu-1g", "asia-northeast1", "asia-northeast1-a", "on_demand")]
    spot = quotes[("a2-highgpu-1g", "asia-northeast1", "asia-northeast1-a", "spot")]
    # Host row 0.94803 / 0.41783 plus the 1x A100 row 1.70586 / 1.2307 in the same zone.
    assert on_demand.usd_per_hour == Decimal("2.653890")
    assert spot.usd_per_hour == Decimal("1.648530")
    assert (on_demand.accelerator_name, on_demand.gpu_count) == ("A100", 1)
    assert on_demand.vcpus == Decimal("12.0")
    assert on_demand.gpu_memory_gib == Decimal(40)


def test_gcp_g2_hosts_pair_with_their_l4_count_and_nolssd_variants_with_their_gpus():
    rows = file_rows("gcp")

    def price(instance_type: str, accelerator: str, count: str) -> Decimal:
        def row_price(match: dict) -> Decimal:
            return Decimal(next(r for r in rows if match.items() <= r.items())["Price"])

        place = {"AvailabilityZone": "us-central1-a"}
        return row_price({"InstanceType": instance_type, **place}) + row_price(
            {"InstanceType": "", "AcceleratorName": accelerator, "AcceleratorCount": count, **place}
        )

    quotes = by_offer_key(parse_file("gcp"))
    g2 = quotes[("g2-standard-24", "us-central1", "us-central1-a", "on_demand")]
    assert (g2.accelerator_name, g2.gpu_count) == ("L4", 2)
    assert g2.usd_per_hour == price("g2-standard-24", "L4", "2")
    nolssd = quotes[("a3-ultragpu-8g-nolssd", "us-central1", "us-central1-b", "on_demand")]
    assert (nolssd.accelerator_name, nolssd.gpu_count) == ("H200", 8)


def test_gcp_tpu_rows_are_whole_prices_counted_in_chips():
    quotes = parse_file("gcp").quotes
    chips = {(q.gpu_description, q.accelerator_name): q.gpu_count for q in quotes}
    assert chips[("tpu-v5p-8", "tpu-v5p")] == 4  # 8 TensorCores, two per chip
    assert chips[("tpu-v4-8", "tpu-v4")] == 4
    assert chips[("tpu-v5litepod-8", "tpu-v5litepod")] == 8  # v5e counts chips
    assert chips[("tpu-v6e-1", "tpu-v6e")] == 1
    row = next(
        r
        for r in file_rows("gcp")
        if r["AcceleratorName"] == "tpu-v6e-8" and r["Price"] not in ("700.0", "")
    )
    quote = next(
        q
        for q in quotes
        if q.instance_type == "tpu-v6e-8"
        and q.zone == row["AvailabilityZone"]
        and q.pricing_model == PricingModel.ON_DEMAND
    )
    assert quote.usd_per_hour == Decimal(row["Price"])


def test_gcp_700_sentinel_and_a4_zero_host_prices_are_no_price():
    result = parse_file("gcp")
    assert reasons(result)["no price (700.0 sentinel)"] > 0
    assert not any(q.usd_per_hour == Decimal(700) for q in result.quotes)
    a4 = [s for s in result.skipped if s.instance_type == "a4-highgpu-8g"]
    assert a4 and all("host line" in s.detail and "0.0 sentinel" in s.detail for s in a4)
    assert not any(q.accelerator_name == "B200" for q in result.quotes)


def test_gcp_gpu_only_rows_are_priced_with_the_n1_host_skypilot_would_take():
    result = parse_file("gcp")
    assert GPU_WITHOUT_N1_HOST not in reasons(result)  # every T4/V100/P100/P4 row has a host
    n1_rows = [r for r in file_rows("gcp") if r["InstanceType"].startswith("n1-")]
    assert reasons(result)[N1_HOST_ROW] == len(n1_rows) > 0
    quotes = by_offer_key(result)

    def quote(instance_type: str, model: str = "on_demand"):
        return quotes[(instance_type, "us-central1", "us-central1-a", model)]

    # us-central1-a rows: T4 0.35/0.175 per GPU, V100 2.48/1.0885 per GPU; n1-highmem-4
    # 0.23661/0.06466 (4 vCPUs, 26 GiB: the smallest with 16 GiB), n1-standard-64
    # 3.03998/0.83568 (4x T4 needs 48 vCPUs and 192 GiB), n1-highmem-64 3.7857/1.03456 (8x
    # V100 needs 64 vCPUs and 256 GiB; n1-standard-96 costs 4.55998).
    t4 = quote("n1-highmem-4 + 1x T4")
    assert (t4.usd_per_hour, t4.gpu_count, t4.vcpus) == (Decimal("0.58661"), 1, 4)
    assert quote("n1-highmem-4 + 1x T4", "spot").usd_per_hour == Decimal("0.23966")
    assert quote("n1-standard-64 + 4x T4").usd_per_hour == Decimal("4.43998")
    assert quote("n1-highmem-64 + 8x V100").usd_per_hour == Decimal("23.6257")
    assert quote("n1-highmem-8 + 1x P4").gpu_memory_gib == Decimal(8)


GCP_HEADER = (
    "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,"
    "AvailabilityZone,Price,SpotPrice\n"
)


def test_gcp_gpu_only_rows_pair_with_the_cheapest_n1_host_that_has_enough_vcpus_and_memory():
    # Hand-made rows in one zone: n1-standard-4 is too small in memory for a T4 (4 vCPUs need
    # 16 GiB), n1-highmem-4 fits and is cheaper than n1-highmem-8; no n1 VM has 48 vCPUs for 4x.
    zone = ",us-central1,us-central1-a,"
    text = GCP_HEADER + "".join(
        [
            f"n1-standard-4,4.0,15.0,,,{zone}0.19,0.04\n",
            f"n1-highmem-8,8.0,52.0,,,{zone}0.47,0.10\n",
            f"n1-highmem-4,4.0,26.0,,,{zone}0.24,0.05\n",
            f",,,T4,1,\"{{'Gpus': [{{'MemoryInfo': {{'SizeInMiB': 16384}}}}]}}\"{zone}0.35,0.14\n",
            f",,,T4,4,{zone}1.40,0.56\n",
        ]
    )
    result = parse_text("gcp", text)
    quotes = by_offer_key(result)
    on_demand = quotes[("n1-highmem-4 + 1x T4", "us-central1", "us-central1-a", "on_demand")]
    spot = quotes[("n1-highmem-4 + 1x T4", "us-central1", "us-central1-a", "spot")]
    assert (on_demand.usd_per_hour, spot.usd_per_hour) == (Decimal("0.59"), Decimal("0.19"))
    assert (on_demand.gpu_count, on_demand.vcpus, on_demand.gpu_memory_gib) == (1, 4, 16)
    assert [s.detail for s in result.skipped if s.reason == GPU_WITHOUT_N1_HOST] == ["4x T4"]


def test_aws_fpga_rows_are_skipped_as_not_ml_accelerators_not_left_for_the_matcher():
    result = parse_file("aws")
    fpga = [r for r in file_rows("aws") if r["InstanceType"].split(".")[0] in ("f1", "f2")]
    assert reasons(result)["FPGA instance (AWS f1/f2), not an ML accelerator"] == len(fpga) > 0
    assert not any(q.instance_type.startswith(("f1.", "f2.")) for q in result.quotes)


def test_aws_fractional_l4_slices_are_skipped_with_their_share():
    result = parse_file("aws")
    fractional = [r for r in file_rows("aws") if Decimal(r["AcceleratorCount"]) < 1]
    skipped = [s for s in result.skipped if s.reason == FRACTIONAL_GPU]
    assert len(skipped) == len(fractional) > 0
    assert {s.detail for s in skipped} == {
        "0.125 of one L4",
        "0.25 of one L4",
        "0.5 of one L4",
    }
    assert not any(q.instance_type.startswith(("g6f.", "gr6f.")) for q in result.quotes)


def test_aws_rows_without_an_on_demand_price_keep_their_spot_price():
    result = parse_file("aws")
    p5e = [q for q in result.quotes if q.instance_type == "p5e.48xlarge"]
    assert p5e and {q.pricing_model for q in p5e} == {PricingModel.SPOT}
    assert reasons(result)["no price (empty)"] > 0  # rows with neither price


def test_oci_lists_one_offer_per_region_for_its_identically_priced_domains():
    rows = file_rows("oci")
    result = parse_file("oci")
    shapes_by_region = {(r["InstanceType"], r["Region"]) for r in rows}
    on_demand = [q for q in result.quotes if q.pricing_model == PricingModel.ON_DEMAND]
    assert len(on_demand) == len(shapes_by_region) < len(rows)
    assert {q.zone for q in result.quotes} == {""}
    assert reasons(result)[SAME_PRICE_OTHER_ZONE] == len(rows) - len(shapes_by_region)


HEADER = (
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region\n"
)


def test_700_zero_and_empty_prices_mean_no_price_each_with_its_name():
    result = parse_text(
        "vast",
        HEADER
        + "a,H100,1,8,64,,700.0,0.00,eu\n"
        + "b,H100,1,8,64,,2.5,0,eu\n"
        + "c,H100,1,8,64,,0.0,,eu\n"
        + "d,H100,1,8,64,,,,eu\n",
    )
    assert [(q.instance_type, q.pricing_model, q.usd_per_hour) for q in result.quotes] == [
        ("b", PricingModel.ON_DEMAND, Decimal("2.500000"))
    ]
    assert [s.reason for s in result.skipped] == [
        "no price (700.0 sentinel)",
        "no price (0.0 sentinel)",
        "no price (empty)",
    ]


def test_a_row_repeated_verbatim_is_loaded_once_and_counted():
    row = "a,H100,1,8,64,,2.5,,eu\n"
    result = parse_text("lambda", HEADER + row + row + row)
    assert len(result.quotes) == 1 and result.rows_read == 3
    assert [(s.reason, s.detail) for s in result.skipped] == [
        (DUPLICATE_ROW, "repeats line 2"),
        (DUPLICATE_ROW, "repeats line 2"),
    ]


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
    assert result.skipped[0].reason == SPOT_EQUALS_ON_DEMAND


def test_cpu_only_and_fractional_gpu_rows_are_skipped_with_reasons():
    result = parse_text("aws", HEADER + "cpu,,,4,16,,0.2,,us\nhalf,L4,0.5,4,16,,0.4,,us\n")
    assert result.quotes == []
    assert [(s.reason, s.detail) for s in result.skipped] == [
        ("no accelerator (CPU-only)", ""),
        (FRACTIONAL_GPU, "0.5 of one L4"),
    ]


def test_float_noise_in_prices_is_rounded_to_a_millionth_of_a_dollar():
    (quote,) = parse_text("cudo", HEADER + "a,A40,1,2,4,,0.36979999999999996,,ca\n").quotes
    assert quote.usd_per_hour == Decimal("0.369800")
