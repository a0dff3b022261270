"""POST /api/v1/advice/capacity and `manage.py plan` over the bundled catalogue: the answer's
shape, a 400 naming the field for bad input, and what would meet an impossible target."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

URL = "/api/v1/advice/capacity"
REQUEST = {
    "model": "llama-3.1-8b",
    "requests_per_second": 40,
    "average_requests_per_second": 15,
    "prompt_tokens": 2000,
    "output_tokens": 300,
    "ttft_p95_ms": 500,
    "max_candidates": 5,
}
RANGE = {"low", "expected", "high"}
BILLS = {"on_demand", "spot", "reserved_1y", "reserved_3y", "scheduled"}


def test_a_capacity_answer_has_the_documented_fields(api):
    response = api.post(URL, REQUEST, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert {"plan", "candidates", "assumptions", "what_would_meet", "load", "objectives"} <= set(
        body
    )
    assert body["what_would_meet"] is None
    assert len(body["candidates"]) == 5
    plan = body["plan"]
    assert plan == body["candidates"][0] and plan["meets_objectives"]
    assert {
        "gpu",
        "gpu_count",
        "max_requests_per_second_per_replica",
        "replicas",
        "gpus_total",
        "utilization_at_average",
        "meets_objectives",
        "reason",
        "ttft_p95_ms",
        "itl_p95_ms",
        "offer",
        "usd_per_month",
    } <= set(plan)
    assert set(plan["ttft_p95_ms"]) == set(plan["itl_p95_ms"]) == RANGE
    assert set(plan["usd_per_month"]) == BILLS
    assert plan["usd_per_month"]["reserved_1y"] is None
    assert plan["gpus_total"] == plan["replicas"] * plan["gpu_count"]
    assert plan["replicas"] * plan["max_requests_per_second_per_replica"] >= 40
    on_demand = plan["offers"]["on_demand"]
    per_gpu_hour = on_demand["usd_per_hour"] / plan["gpu_count"]
    assert plan["usd_per_month"]["on_demand"] == pytest.approx(
        730 * plan["gpus_total"] * per_gpu_hour, abs=0.01
    )
    assert any("Poisson" in line for line in body["assumptions"])
    assert any("spot" in line for line in body["assumptions"])


def test_the_plans_are_ranked_by_their_monthly_bill(api):
    body = api.post(URL, {**REQUEST, "max_candidates": 0}, format="json").json()
    bills = [
        c["usd_per_month"]["on_demand"]
        for c in body["candidates"]
        if c["meets_objectives"] and c["usd_per_month"]["on_demand"] is not None
    ]
    assert bills and bills == sorted(bills)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"requests_per_second": -1}, "requests_per_second"),
        ({"requests_per_second": 0}, "requests_per_second"),
        ({"requests_per_second": "many"}, "requests_per_second"),
        ({"ttft_p95_ms": None}, "ttft_p95_ms"),
        ({"ttft_p95_ms": -5}, "ttft_p95_ms"),
        ({"model": "no-such-model"}, "model"),
        ({"prompt_tokens": 0}, "prompt_tokens"),
        ({"prompt_tokens": 10_000_000}, "prompt_tokens"),
        ({"output_tokens": 0}, "output_tokens"),
        ({"average_requests_per_second": 80}, "average_requests_per_second"),
        ({"pricing_model": "reserved"}, "pricing_model"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(api, change, field):
    response = api.post(URL, {**REQUEST, **change}, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json()


def test_a_prompt_past_the_models_positions_is_a_400_on_prompt_tokens(api):
    # GPT-2 has 1,024 learned positions.
    response = api.post(URL, {**REQUEST, "model": "gpt2"}, format="json")
    assert response.status_code == 400
    assert "prompt_tokens" in response.json()


def test_training_fields_are_not_part_of_the_request_and_say_so(api):
    response = api.post(URL, {**REQUEST, "task": "full", "batch_size": 64}, format="json")
    assert response.status_code == 400
    errors = response.json()
    assert set(errors) == {"task", "batch_size"}
    assert "not part of a capacity request" in errors["task"][0]


def test_a_misspelt_objective_is_refused_with_the_field_it_meant(api):
    request = {k: v for k, v in REQUEST.items() if k != "ttft_p95_ms"} | {"ttft_p95": 500}
    response = api.post(URL, request, format="json")
    assert response.status_code == 400
    assert response.json()["ttft_p95"] == ["Unknown field. Did you mean ttft_p95_ms?"]


def test_a_misspelt_ownership_input_is_refused(api):
    response = api.post(URL, {**REQUEST, "ownership": {"puee": 1.2}}, format="json")
    assert response.status_code == 400
    assert "pue" in str(response.json()["ownership"])


def test_a_profile_hour_must_be_a_json_number(api):
    hours = [1] * 23 + ["1"]
    request = {**REQUEST, "hourly_requests_per_second": hours}
    request.pop("average_requests_per_second")
    response = api.post(URL, request, format="json")
    assert response.status_code == 400
    assert "Item 23" in response.json()["hourly_requests_per_second"][0]


def test_an_impossible_target_answers_with_what_would_meet_it(api):
    body = api.post(URL, {**REQUEST, "ttft_p95_ms": 2}, format="json").json()
    assert body["plan"] is None
    assert not any(c["meets_objectives"] for c in body["candidates"])
    assert all("2 ms" in c["reason"] for c in body["candidates"])
    changes = {change["change"]: change for change in body["what_would_meet"]}
    assert {"objective", "faster_part"} <= set(changes)
    loosest = changes["objective"]["value"]
    assert loosest > 2
    looser = api.post(URL, {**REQUEST, "ttft_p95_ms": loosest + 0.1}, format="json").json()
    assert looser["candidates_meeting"] >= 1 and looser["what_would_meet"] is None


def test_the_plan_command_prints_the_plan_and_the_json(catalog):
    out = StringIO()
    arguments = [
        "--model=llama-3.1-8b",
        "--requests-per-second=40",
        "--prompt-tokens=2000",
        "--output-tokens=300",
        "--ttft-p95-ms=500",
    ]
    call_command("plan", *arguments, stdout=out)
    assert "Plan:" in out.getvalue() and "/month on demand" in out.getvalue()
    out = StringIO()
    call_command("plan", *arguments, "--json", "--max-candidates=3", stdout=out)
    body = json.loads(out.getvalue())
    assert body["plan"]["meets_objectives"] and len(body["candidates"]) == 3


def test_the_plan_command_refuses_what_the_api_refuses(catalog):
    with pytest.raises(CommandError, match="ttft_p95_ms"):
        call_command(
            "plan",
            "--model=llama-3.1-8b",
            "--requests-per-second=4",
            "--prompt-tokens=2000",
            "--output-tokens=300",
        )
