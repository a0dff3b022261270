"""The advisor's catalogue read: every figure of every GPU and offer lands in the Device or
Offer field of its name (the read was positional: reordering its column list swapped figures
silently), and the per-process snapshot is rebuilt when the catalogue changes."""

from advisor.domain.devices import Offer
from advisor.selectors import catalogue_snapshot_get, device_list, device_offers_list
from catalog.models import Gpu
from catalog.models import Offer as OfferRow
from tests.advisor.devices import catalogue_devices


def test_every_catalogue_gpu_reads_into_the_device_field_of_its_name(catalog):
    expected = catalogue_devices()
    devices = device_list()
    assert [device.name for device in devices] == sorted(d.name for d in expected.values())
    for device in devices:
        assert device == expected[device.key]


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
