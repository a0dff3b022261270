"""A 24-hour load profile through POST /api/v1/advice/capacity and `manage.py plan`: the
schedule comes back with the plan, and a profile that cannot be a day's load is a 400."""

from io import StringIO

import pytest
from django.core.management import call_command

URL = "/api/v1/advice/capacity"
DAY = [5, 4, 3, 3, 3, 4, 8, 15, 25, 32, 36, 40, 40, 38, 36, 35, 33, 30, 26, 22, 18, 14, 10, 7]
REQUEST = {
    "model": "llama-3.1-8b",
    "requests_per_second": 40,
    "hourly_requests_per_second": DAY,
    "prompt_tokens": 2000,
    "output_tokens": 300,
    "ttft_p95_ms": 500,
    "max_candidates": 3,
}


def test_a_profile_gives_replicas_per_hour_and_a_scheduled_bill(api):
    response = api.post(URL, REQUEST, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    plan = body["plan"]
    rate = plan["max_requests_per_second_per_replica"]
    assert len(plan["replicas_by_hour"]) == 24
    # Each hour holds its rate, within the rounding of the reported per-replica rate.
    for hour_rate, replicas in zip(DAY, plan["replicas_by_hour"], strict=True):
        assert replicas * rate >= hour_rate * 0.999
        assert replicas >= 1
    assert max(plan["replicas_by_hour"]) == plan["replicas"]
    bill = plan["usd_per_month"]
    # No feed in the bundled catalogue sells reservations: the base is 0, the schedule is the
    # on-demand price for each hour's replicas.
    assert plan["reserved_replicas"] == 0 and bill["reserved_1y"] is None
    per_replica_hour = plan["offers"]["on_demand"]["usd_per_hour"]
    expected = sum(plan["replicas_by_hour"]) * per_replica_hour * 730 / 24
    assert bill["scheduled"] == pytest.approx(expected, abs=0.01)
    assert bill["scheduled"] < bill["on_demand"]
    assert body["load"]["average_used"] == pytest.approx(sum(DAY) / 24, rel=1e-3)


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"hourly_requests_per_second": DAY[:23]}, "hourly_requests_per_second", "24"),
        ({"hourly_requests_per_second": [*DAY[:23], 41]}, "hourly_requests_per_second", "peak"),
        ({"hourly_requests_per_second": [0] * 24}, "hourly_requests_per_second", "0"),
        ({"hourly_requests_per_second": [*DAY[:23], -1]}, "hourly_requests_per_second", "0"),
        ({"average_requests_per_second": 20}, "average_requests_per_second", "not both"),
    ],
)
def test_a_profile_that_cannot_be_the_days_load_is_a_400(api, change, field, words):
    response = api.post(URL, REQUEST | change, format="json")
    assert response.status_code == 400
    assert words in str(response.json()[field])


def test_the_plan_command_prints_the_hourly_schedule(catalog):
    out = StringIO()
    call_command(
        "plan",
        "--model=llama-3.1-8b",
        "--requests-per-second=40",
        "--prompt-tokens=2000",
        "--output-tokens=300",
        "--ttft-p95-ms=500",
        f"--hourly-requests-per-second={','.join(map(str, DAY))}",
        stdout=out,
    )
    text = out.getvalue()
    assert "on the 24-hour schedule" in text
    assert "replicas by hour from midnight: 1 1 1" in text
