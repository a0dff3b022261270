"""The /plan/ page: the form asks by GET (its URL is the link to the answer), the answer shows
the plan, its bills, the chart of bills against the objective and the hourly schedule, and bad
input is a 400 that names the field."""

import re

DAY = "5,4,3,3,3,4,8,15,25,32,36,40,40,38,36,35,33,30,26,22,18,14,10,7"
QUERY = {
    "model": "llama-3.1-8b",
    "requests_per_second": "40",
    "prompt_tokens": "2000",
    "output_tokens": "300",
    "ttft_p95_ms": "500",
}


def test_the_empty_page_shows_the_form_with_an_example_question(web):
    html = web.get("/plan/").content.decode()
    assert 'id="plan-form"' in html and 'method="get"' in html
    assert 'name="requests_per_second" value="40"' in html
    assert 'id="results"' not in html


def test_the_answer_shows_the_plan_its_bills_and_the_chart_against_the_objective(web, api):
    response = web.get("/plan/", QUERY)
    assert response.status_code == 200
    html = response.content.decode()
    body = {k: v if k == "model" else int(v) for k, v in QUERY.items()}
    answer = api.post("/api/v1/advice/capacity", body, format="json")
    assert answer.status_code == 200, answer.content
    plan = answer.json()["plan"]
    headline = re.search(r'id="plan-headline">([^<]*)<', html).group(1)
    assert f"{plan['replicas']} replica" in headline and plan["gpu_name"] in headline
    assert f"${plan['usd_per_month_ranked']:,.0f} a month" in headline
    assert 'id="bills"' in html and "not offered" in html  # no reservation in the seed
    chart = html[html.index('id="cost-against-objective"') :]
    assert "objective 500 ms" in chart and "cost-chart" in chart
    assert 'id="schedule"' not in html  # no profile, no schedule


def test_a_profile_draws_the_hourly_replica_schedule(web):
    html = web.get("/plan/", QUERY | {"hourly_requests_per_second": DAY}).content.decode()
    schedule = html[html.index('id="schedule"') :]
    assert "schedule-chart" in schedule
    bars = re.findall(r"<title>(\d\d):00: (\d+) replicas", schedule)
    hours = {hour for hour, _ in bars}
    assert len(hours) == 24
    assert "From midnight: 1, 1, 1" in schedule


def test_bad_input_is_a_400_that_links_the_field(web):
    response = web.get("/plan/", QUERY | {"hourly_requests_per_second": "1,2,3"})
    assert response.status_code == 400
    html = response.content.decode()
    assert '<a href="#id_hourly_requests_per_second">24-hour profile</a>' in html
    assert "24" in html[html.index("error-summary") :]


def test_no_objective_is_a_400_on_the_first_objective(web):
    query = {k: v for k, v in QUERY.items() if k != "ttft_p95_ms"}
    response = web.get("/plan/", query)
    assert response.status_code == 400
    assert "Give at least one objective" in response.content.decode()


def test_an_impossible_target_says_what_would_meet_it(web):
    response = web.get("/plan/", QUERY | {"ttft_p95_ms": "1"})
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="no-plan"' in html
    assert "No priced candidate meets the objectives." in html


def test_the_plan_says_whether_buying_its_part_would_pay_off(web, api):
    html = web.get("/plan/", QUERY).content.decode()
    body = {k: v if k == "model" else int(v) for k, v in QUERY.items()}
    ownership = api.post("/api/v1/advice/capacity", body, format="json").json()["plan"][
        "rent_vs_buy"
    ]
    assert ownership is not None  # the seed's cheapest plan is a part with a sourced price
    fact = html[html.index('id="rent-or-buy"') :]
    assert ownership["sentence"][1:40] in fact
    assert f"${ownership['tco_usd_per_gpu_hour']['typical']:,.2f}" in fact
