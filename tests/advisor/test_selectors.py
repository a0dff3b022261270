"""The advisor's catalogue read: every figure of every GPU and offer lands in the Device or
Offer field of its name (the read was positional: reordering its column list swapped figures
silently), and the per-process snapshot is rebuilt when the catalogue changes."""

from advisor.domain.devices import Offer
from advisor.selectors import catalogue_snapshot_get, device_list, device_offers_list
from catalog.models import Gpu
from catalog.models import Offer as OfferRow
from catalog.selectors import offer_list
from tests.advisor.devices import catalogue_devices
from tests.catalog.test_admin_price_edit import change_form_data, change_url


def test_every_catalogue_gpu_reads_into_the_device_field_of_its_name(catalog):
    expected = catalogue_devices()
    devices = device_list()
    assert [device.name for device in devices] == sorted(d.name for d in expected.values())
    for device in devices:
        assert device == expected[device.key]


def test_every_offer_reads_into_the_offer_field_of_its_name(catalog):
    offers = device_offers_list(pricing_model="spot")
    rows = offer_list().filter(pricing_model="spot")
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
                provider_kind=row.provider.kind,
                freshness=row.freshness,
                price_observed_at=row.price_observed_at,
                pricing_url=row.pricing_url,
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


def _cheapest_answer(api) -> dict:
    response = api.post(
        "/api/v1/advice/sizing",
        {"model": "llama-3.1-8b", "task": "inference", "context_tokens": 4096},
        format="json",
    )
    assert response.status_code == 200
    return response.json()["candidates"][0]


def _where(offer: OfferRow) -> tuple[str, str]:
    return offer.instance_type, offer.region


def _offer_of(candidate: dict) -> OfferRow:
    return OfferRow.objects.get(
        gpu__canonical_key=candidate["gpu"],
        gpu_count=candidate["gpu_count"],
        provider__key=candidate["offer"]["provider"],
        instance_type=candidate["offer"]["instance_type"],
        region=candidate["offer"]["region"],
        pricing_model=candidate["offer"]["pricing_model"],
        usd_per_hour=candidate["usd_per_hour"],
    )


def test_a_price_edited_in_the_admin_is_in_the_very_next_sizing_answer(api, admin_client):
    first = _cheapest_answer(api)
    offer = _offer_of(first)
    # Ten times dearer: the next answer prices this instance so, or ranks another first.
    new_price = offer.usd_per_hour * 10
    data = change_form_data(admin_client, offer) | {
        "usd_per_hour": str(new_price),
        "reason": "a test of the next answer",
    }
    response = admin_client.post(change_url(offer), data)
    assert response.status_code == 302, response.content.decode()[:2000]
    offer.refresh_from_db()
    assert offer.usd_per_hour == new_price
    second = _cheapest_answer(api)
    assert second != first
    # Another instance (another region at the same price, or another GPU) is priced now.
    assert second["offer"] != first["offer"]
    [edited] = [
        o
        for o in catalogue_snapshot_get(pricing_model="on_demand")[1][first["gpu"]]
        if (o.provider, o.instance_type, o.region) == (offer.provider.key, *_where(offer))
    ]
    assert edited.usd_per_hour == float(new_price)
    # A person vouched for it today: live, dated today.
    assert edited.freshness == "live" and edited.price_observed_at == offer.price_observed_at


def test_a_gpu_edited_through_a_bulk_write_is_in_the_next_snapshot(catalog):
    devices, _ = catalogue_snapshot_get(pricing_model="on_demand")
    Gpu.objects.filter(canonical_key="H100-SXM").update(memory_bandwidth_gb_s=3001)
    fresh, _ = catalogue_snapshot_get(pricing_model="on_demand")
    assert fresh is not devices
    assert next(d for d in fresh if d.key == "H100-SXM").bandwidth_gb_s == 3001.0
