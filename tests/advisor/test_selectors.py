"""The advisor's catalogue read: every figure of every GPU and offer lands in the Device or
Offer field of its name (the read was positional: reordering its column list swapped figures
silently), and the per-process snapshot is rebuilt when the catalogue changes."""

import csv
from pathlib import Path

from advisor.domain.devices import Device, Offer
from advisor.selectors import catalogue_snapshot_get, device_list, device_offers_list
from catalog.models import Gpu
from catalog.models import Offer as OfferRow

GPUS_CSV = Path(__file__).resolve().parents[2] / "catalog/data/gpus.csv"


def _number(text: str) -> float | None:
    return float(text) if text.strip() else None


def test_every_catalogue_gpu_reads_into_the_device_field_of_its_name(catalog):
    with GPUS_CSV.open(newline="") as file:
        rows = {row["canonical_key"]: row for row in csv.DictReader(file)}
    devices = device_list()
    assert [device.name for device in devices] == sorted(row["name"] for row in rows.values())
    for device in devices:
        row = rows[device.key]
        assert device == Device(
            key=row["canonical_key"],
            name=row["name"],
            vendor=row["vendor"],
            memory_gib=float(row["memory_gb"]),
            bandwidth_gb_s=float(row["memory_bandwidth_gbps"]),
            fp32_tflops=_number(row["fp32_tflops"]),
            tf32_tflops=_number(row["tf32_tflops_dense"]),
            bf16_tflops=_number(row["bf16_tflops_dense"]),
            fp16_tflops=_number(row["fp16_tflops_dense"]),
            fp8_tflops=_number(row["fp8_tflops_dense"]),
            int8_tops=_number(row["int8_tops_dense"]),
            supports_tf32=row["supports_tf32"] == "Y",
            supports_bf16=row["supports_bf16"] == "Y",
            supports_fp8=row["supports_fp8"] == "Y",
            interconnect=row["interconnect"],
            interconnect_gb_s=_number(row["interconnect_gbps"]),
        )


def test_every_offer_reads_into_the_offer_field_of_its_name(catalog):
    offers = device_offers_list(pricing_model="spot")
    rows = OfferRow.objects.filter(pricing_model="spot").select_related("gpu", "provider")
    expected: dict[str, list[Offer]] = {}
    for row in rows:
        expected.setdefault(row.gpu.canonical_key, []).append(
            Offer(
                provider=row.provider.key,
                provider_name=row.provider.name,
                instance_type=row.instance_type,
                region=row.region,
                gpu_count=row.gpu_count,
                usd_per_hour=float(row.usd_per_hour),
                pricing_model="spot",
            )
        )
    assert expected and {key: sorted(map(repr, rows)) for key, rows in offers.items()} == {
        key: sorted(map(repr, rows)) for key, rows in expected.items()
    }


def test_the_snapshot_is_reused_until_a_gpu_changes(catalog):
    devices, offers = catalogue_snapshot_get(pricing_model="on_demand")
    again = catalogue_snapshot_get(pricing_model="on_demand")
    assert again[0] is devices and again[1] is offers
    gpu = Gpu.objects.get(canonical_key="H100-SXM")
    gpu.memory_bandwidth_gb_s = 3000
    gpu.save()
    fresh, _ = catalogue_snapshot_get(pricing_model="on_demand")
    assert fresh is not devices
    assert next(d for d in fresh if d.key == "H100-SXM").bandwidth_gb_s == 3000.0
