"""Rent against buy: the owned GPU-hour's cost and the break-even utilisation (the arithmetic,
checked by hand), the bundled purchase prices, and `rent_vs_buy` on capacity and training
answers with their overrides."""

import csv
import json
from dataclasses import replace
from io import StringIO
from itertools import pairwise
from urllib.parse import urlparse

import pytest
from django.core.management import CommandError, call_command

from advisor.domain.planning.ownership import (
    OwnershipInputs,
    break_even_utilization,
    purchase_prices_load,
    tco_usd_per_gpu_hour,
)
from advisor.domain.planning.rent_vs_buy import rent_vs_buy, rent_vs_buy_report
from advisor.domain.sizing.rental import UNCONSTRAINED, Rental
from tests.advisor.devices import GPUS, GPUS_CSV, offer

DEFAULTS = OwnershipInputs()
H100 = GPUS["H100-SXM"]
PRICES = purchase_prices_load()


def test_a_busier_gpu_costs_less_per_used_hour():
    costs = [tco_usd_per_gpu_hour(30_000, 700, DEFAULTS, u / 10) for u in range(1, 11)]
    assert all(later < earlier for earlier, later in pairwise(costs))


def test_dearer_rent_breaks_even_at_a_lower_utilisation():
    thresholds = [break_even_utilization(rent, 30_000, 700, DEFAULTS) for rent in (2, 3, 4, 6)]
    assert all(later < earlier for earlier, later in pairwise(thresholds))


def test_the_h100_example_matches_the_arithmetic_by_hand():
    # $30,000 plus a 32% server over 4 x 8,760 h; 0.7 kW at $184.06/kW-month of colocation;
    # 0.7 kW x PUE 1.58 x $0.0895/kWh in each working hour.
    capital_per_hour = 39_600 / 35_040  # 1.130137
    hosting_per_hour = 128.842 * 12 / 8_760  # 0.176496
    power_per_hour = 0.7 * 1.58 * 0.0895  # 0.098987
    fixed = capital_per_hour + hosting_per_hour
    assert tco_usd_per_gpu_hour(30_000, 700, DEFAULTS, 0.6) == pytest.approx(
        fixed / 0.6 + power_per_hour
    )
    assert tco_usd_per_gpu_hour(30_000, 700, DEFAULTS, 0.6) == pytest.approx(2.2767, abs=1e-4)
    assert break_even_utilization(2.99, 30_000, 700, DEFAULTS) == pytest.approx(0.4520, abs=1e-4)


def test_owning_costs_exactly_the_rent_at_the_break_even():
    threshold = break_even_utilization(2.50, 30_000, 700, DEFAULTS)
    assert tco_usd_per_gpu_hour(30_000, 700, DEFAULTS, threshold) == pytest.approx(2.50)


def test_renting_that_stays_cheaper_up_to_full_use_never_breaks_even():
    # $1/GPU-hour is below the $1.41 an H100 costs to own even when it works every hour.
    assert tco_usd_per_gpu_hour(30_000, 700, DEFAULTS, 1.0) > 1.0
    assert break_even_utilization(1.0, 30_000, 700, DEFAULTS) is None
    # Rent below the power bill alone.
    assert break_even_utilization(0.05, 30_000, 700, DEFAULTS) is None


def test_a_utilisation_outside_zero_to_one_is_refused():
    for utilization in (0, -0.1, 1.5):
        with pytest.raises(ValueError, match="utilization"):
            tco_usd_per_gpu_hour(30_000, 700, DEFAULTS, utilization)


def test_overrides_change_the_cost_and_are_remembered():
    dearer_power = OwnershipInputs.with_overrides(usd_per_kwh=0.30, pue=1.2)
    assert dearer_power.overridden == {"usd_per_kwh", "pue"}
    assert dearer_power.power_usd_per_hour(700) == pytest.approx(0.7 * 1.2 * 0.30)
    longer = OwnershipInputs.with_overrides(depreciation_years=6)
    assert break_even_utilization(2.99, 30_000, 700, longer) < break_even_utilization(
        2.99, 30_000, 700, DEFAULTS
    )


def test_a_server_share_in_dollars_and_hosting_per_gpu_replace_the_defaults():
    inputs = OwnershipInputs.with_overrides(server_share_usd=5_000, hosting_usd_per_gpu_month=73)
    fixed = (30_000 + 5_000) / 35_040 + 73 * 12 / 8_760
    assert inputs.fixed_usd_per_hour(30_000, 700) == pytest.approx(fixed)


def test_every_bundled_price_is_a_catalogue_gpu_with_a_dated_source_and_an_ordered_range():
    with GPUS_CSV.open(newline="") as file:
        keys = {row["canonical_key"] for row in csv.DictReader(file)}
    assert {"H100-SXM", "H200-SXM", "B200-SXM", "MI300X", "L4", "RTX4090"} <= set(PRICES)
    for price in PRICES.values():
        assert price.gpu_key in keys
        assert 0 < price.low_usd <= price.typical_usd <= price.high_usd
        assert price.confidence in {"high", "medium", "low"}
        assert price.published and price.read_on.year >= 2024
        assert all(urlparse(url).scheme == "https" for url in price.source_urls)
        # A press estimate is never stated with high confidence.
        assert price.kind != "press_report" or price.confidence == "low"


def _reserved(usd_per_hour: float, pricing_model: str):
    return replace(offer("x", f"{pricing_model}-8", 8, usd_per_hour), pricing_model=pricing_model)


def test_a_candidate_breaks_even_against_each_rented_pricing_model():
    offers = [
        offer("lambda", "8x-h100", 8, 8 * 2.99),
        offer("dear", "8x-h100-dear", 8, 8 * 6.0),
        _reserved(8 * 2.20, "reserved_1y"),
        _reserved(8 * 1.80, "reserved_3y"),
        offer("single", "1x-h100", 1, 1.0),  # another count: not this candidate's
    ]
    result = rent_vs_buy(
        H100, 8, offers, rental=UNCONSTRAINED, price=PRICES["H100-SXM"], inputs=DEFAULTS
    )
    by_model = {b.pricing_model: b for b in result.break_even}
    assert list(by_model) == ["on_demand", "reserved_1y", "reserved_3y"]
    assert by_model["on_demand"].offer.provider == "lambda"
    typical = [by_model[m].utilization["typical"] for m in by_model]
    assert typical == sorted(typical)  # cheaper rent, higher break-even
    on_demand = by_model["on_demand"].utilization
    assert on_demand["low"] < on_demand["typical"] < on_demand["high"]
    assert "buying pays off above 45% utilisation over 4 years" in result.sentence()


def test_a_part_without_a_purchase_price_or_an_offer_the_team_may_rent():
    assert rent_vs_buy(H100, 1, [], rental=UNCONSTRAINED, price=None, inputs=DEFAULTS) is None
    result = rent_vs_buy(
        H100,
        1,
        [offer("lambda", "1x", 1, 2.99)],
        rental=Rental(providers=("aws",)),
        price=PRICES["H100-SXM"],
        inputs=DEFAULTS,
    )
    assert result.break_even == []
    assert rent_vs_buy_report(result)["break_even_utilization"] == {}


def test_the_report_states_every_input_and_whether_it_was_defaulted():
    inputs = OwnershipInputs.with_overrides(pue=1.2)
    result = rent_vs_buy(H100, 1, [], rental=UNCONSTRAINED, price=PRICES["H100-SXM"], inputs=inputs)
    stated = rent_vs_buy_report(result)["inputs"]
    assert stated["pue"] == {
        "value": 1.2,
        "defaulted": False,
        "default_source": stated["pue"]["default_source"],
    }
    assert all(stated[name]["defaulted"] for name in stated if name != "pue")
    assert stated["tdp_watts"]["value"] == 700


CAPACITY = {
    "model": "llama-3.1-8b",
    "requests_per_second": 40,
    "prompt_tokens": 2000,
    "output_tokens": 300,
    "ttft_p95_ms": 500,
    "max_candidates": 0,
}


@pytest.mark.django_db
def test_each_capacity_candidate_carries_rent_vs_buy_where_its_part_has_a_price(api):
    body = api.post("/api/v1/advice/capacity", CAPACITY, format="json").json()
    running = [c for c in body["candidates"] if c["fits"]]
    priced = [c for c in running if c["gpu"] in PRICES]
    assert priced and all(c["rent_vs_buy"] is not None for c in priced)
    assert all(c["rent_vs_buy"] is None for c in running if c["gpu"] not in PRICES)
    for candidate in priced:
        on_demand = candidate["offers"]["on_demand"]
        compared = candidate["rent_vs_buy"]["break_even_utilization"].get("on_demand")
        if on_demand is not None:
            rent = on_demand["usd_per_hour"] / candidate["gpu_count"]
            assert compared["rent_usd_per_gpu_hour"] == pytest.approx(rent, abs=1e-4)
    assert body["plan"]["rent_vs_buy"] == body["candidates"][0]["rent_vs_buy"]


@pytest.mark.django_db
def test_a_capacity_request_overrides_the_ownership_inputs(api):
    request = {**CAPACITY, "ownership": {"pue": 1.1, "utilization": 0.9}}
    body = api.post("/api/v1/advice/capacity", request, format="json").json()
    compared = next(c["rent_vs_buy"] for c in body["candidates"] if c["rent_vs_buy"])
    assert compared["inputs"]["pue"]["value"] == 1.1
    assert not compared["inputs"]["pue"]["defaulted"]
    assert compared["inputs"]["usd_per_kwh"]["defaulted"]
    assert compared["utilization"] == 0.9


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("ownership", "field"),
    [
        ({"pue": 0.5}, "pue"),
        ({"utilization": 0}, "utilization"),
        ({"utilization": 1.5}, "utilization"),
        ({"depreciation_years": "three"}, "depreciation_years"),
        ({"server_share_fraction": 0.3, "server_share_usd": 4000}, "server_share_usd"),
        (
            {"hosting_usd_per_kw_month": 150, "hosting_usd_per_gpu_month": 90},
            "hosting_usd_per_gpu_month",
        ),
    ],
)
def test_a_bad_ownership_override_is_a_400_naming_it(api, ownership, field):
    response = api.post(
        "/api/v1/advice/capacity", {**CAPACITY, "ownership": ownership}, format="json"
    )
    assert response.status_code == 400
    assert field in response.json()["ownership"]


TRAINING = {"model": "llama-3.1-8b", "task": "full", "max_candidates": 0}


@pytest.mark.django_db
def test_a_training_answer_compares_its_candidates_with_buying(api):
    body = api.post("/api/v1/advice/sizing", TRAINING, format="json").json()
    best = body["recommendation"]
    assert best["gpu"] in PRICES, best["gpu"]
    assert best["rent_vs_buy"]["sentence"].startswith("buying ")
    assert all("rent_vs_buy" in c for c in body["candidates"])


@pytest.mark.django_db
def test_a_serving_answer_leaves_rent_vs_buy_to_the_capacity_plan(api):
    body = api.post("/api/v1/advice/sizing", {"model": "llama-3.1-8b"}, format="json").json()
    assert "rent_vs_buy" not in body["recommendation"]


@pytest.mark.django_db
def test_the_sizing_page_states_when_buying_pays_off_for_a_training_job(web, api):
    sentence = api.post("/api/v1/advice/sizing", TRAINING, format="json").json()["recommendation"][
        "rent_vs_buy"
    ]["sentence"]
    page = web.get("/size/", {"model": "llama-3.1-8b", "task": "full"})
    assert page.status_code == 200
    assert f"Rent or buy: {sentence}" in page.content.decode()


@pytest.mark.django_db
def test_manage_py_plan_prints_the_plans_break_even(catalog):
    out = StringIO()
    call_command(
        "plan",
        "--model=llama-3.1-8b",
        "--requests-per-second=40",
        "--prompt-tokens=2000",
        "--output-tokens=300",
        "--ttft-p95-ms=500",
        '--ownership={"usd_per_kwh": 0.12}',
        stdout=out,
    )
    text = out.getvalue()
    assert "rent or buy: buying" in text


@pytest.mark.django_db
def test_manage_py_size_prints_a_training_jobs_break_even(catalog):
    out = StringIO()
    call_command("size", "--model=llama-3.1-8b", "--task=full", stdout=out)
    assert "rent or buy: buying" in out.getvalue()


@pytest.mark.django_db
def test_manage_py_size_takes_the_same_ownership_overrides_as_the_api(catalog):
    def tco(*ownership: str) -> float:
        out = StringIO()
        call_command(
            "size", "--model=llama-3.1-8b", "--task=full", "--json", *ownership, stdout=out
        )
        return json.loads(out.getvalue())["recommendation"]["rent_vs_buy"]["tco_usd_per_gpu_hour"][
            "typical"
        ]

    assert tco('--ownership={"usd_per_kwh": 0.40}') > tco()


@pytest.mark.django_db
def test_manage_py_size_names_a_bad_ownership_override(catalog):
    with pytest.raises(CommandError, match=r"ownership\.pue"):
        call_command("size", "--model=llama-3.1-8b", "--task=full", '--ownership={"pue": 9}')
