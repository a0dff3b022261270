"""Reserved offers (the catalogue's reserved_1y / reserved_3y, at the hourly equivalent of the
term's price) reach the capacity planner; sizing never prices on them, "any" included."""

from decimal import Decimal

import pytest

from advisor.domain.devices import Offer
from advisor.domain.sizing.rental import (
    ANY_PRICING,
    BILLED_PRICING_MODELS,
    RESERVED_1Y,
    RESERVED_3Y,
    Rental,
    offer_choose,
)
from advisor.selectors import catalogue_offers_get, catalogue_snapshot_get
from tests.catalog.azure_prices import refresh_azure

A100 = "Standard_NC24ads_A100_v4"
A100_RESERVED_1Y_USD_PER_HOUR = 2.277397  # $19,950 for the year (tests/fixtures/prices)


def _offer(pricing_model: str, usd_per_hour: float) -> Offer:
    return Offer(
        provider="azure",
        provider_name="Microsoft Azure",
        instance_type=A100,
        region="eastus",
        gpu_count=1,
        usd_per_hour=usd_per_hour,
        pricing_model=pricing_model,
        provider_kind="hyperscaler",
    )


OFFERS = [
    _offer("on_demand", 3.673),
    _offer("spot", 0.7345),
    _offer(RESERVED_1Y, 0.5),
    _offer(RESERVED_3Y, 0.3),
]


def test_any_pricing_takes_the_cheaper_of_on_demand_and_spot_never_a_cheaper_reservation():
    chosen = offer_choose(OFFERS, gpu_count=1, rental=Rental(), pricing_model=ANY_PRICING)
    assert chosen.pricing_model == "spot"


@pytest.mark.parametrize("pricing_model", [RESERVED_1Y, RESERVED_3Y])
def test_a_reserved_pricing_model_chooses_only_its_own_offers(pricing_model):
    chosen = offer_choose(OFFERS, gpu_count=1, rental=Rental(), pricing_model=pricing_model)
    assert chosen.pricing_model == pricing_model


@pytest.mark.parametrize("pricing_model", [RESERVED_1Y, RESERVED_3Y])
def test_the_sizing_api_refuses_a_reserved_pricing_model(api, pricing_model):
    response = api.post(
        "/api/v1/advice/sizing",
        {"model": "llama-3.1-8b", "pricing_model": pricing_model},
        format="json",
    )
    assert response.status_code == 400
    assert "pricing_model" in response.json()


@pytest.fixture
def azure_reserved(catalog):
    """The bundled catalogue plus an Azure refresh that lists reservations."""
    run = refresh_azure()
    assert run.status == "succeeded", run.reason


def test_the_capacity_planners_offers_hold_reserved_offers_at_their_hourly_equivalent(
    azure_reserved,
):
    _, offers = catalogue_offers_get(pricing_models=BILLED_PRICING_MODELS)
    azure = {
        (o.instance_type, o.region, o.pricing_model): o
        for o in offers["A100-80GB-PCIE"]
        if o.provider == "azure"
    }
    assert azure[(A100, "eastus", RESERVED_1Y)].usd_per_hour == pytest.approx(
        A100_RESERVED_1Y_USD_PER_HOUR
    )
    assert (A100, "eastus", RESERVED_3Y) in azure and (A100, "eastus", "on_demand") in azure
    _, on_demand_only = catalogue_snapshot_get(pricing_model="on_demand")
    assert {o.pricing_model for o in on_demand_only["A100-80GB-PCIE"]} == {"on_demand"}


def test_a_capacity_plan_bills_the_catalogues_reserved_offers(api, azure_reserved):
    body = api.post(
        "/api/v1/advice/capacity",
        {
            "model": "llama-3.1-8b",
            "requests_per_second": 2,
            "prompt_tokens": 1000,
            "output_tokens": 200,
            "e2e_p95_ms": 60000,
            "providers": ["azure"],
            "max_candidates": 0,
        },
        format="json",
    ).json()
    plan = next(
        c
        for c in body["candidates"]
        if c["gpu"] == "A100-80GB-PCIE" and c["gpu_count"] == 1 and c["meets_objectives"]
    )
    reserved = plan["offers"]["reserved_1y"]
    assert (reserved["pricing_model"], reserved["instance_type"]) == (RESERVED_1Y, A100)
    assert Decimal(str(reserved["usd_per_hour"])) == Decimal(str(A100_RESERVED_1Y_USD_PER_HOUR))
    assert plan["usd_per_month"]["reserved_1y"] == pytest.approx(
        730 * plan["replicas"] * A100_RESERVED_1Y_USD_PER_HOUR, abs=0.01
    )
