"""Training across nodes: max_gpus up to 4,096, gpu_count and train_days in the request, the
layout and the network between instances, the deadline's smallest cluster, and the properties
a scale-out model must hold."""

import dataclasses
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from advisor.api.capacity import CapacityRequestSerializer
from advisor.api.serializers import SizingRequestSerializer
from advisor.domain.sizing.bundled_models import bundled_models
from advisor.domain.sizing.cluster_layout import candidate_counts
from advisor.domain.sizing.recommend import rank_candidates, recommend
from advisor.domain.sizing.rental import MAX_CLUSTER_GPUS, Rental
from advisor.domain.sizing.report import offer_report, sizing_report
from advisor.domain.sizing.workload import Task, Workload
from tests.advisor.devices import GPUS, offer

URL = "/api/v1/advice/sizing"
H100 = GPUS["H100-SXM"]
# AWS p5.48xlarge on demand ($98.32/h, 8 H100, EFA v2 3,200 Gbps) and Lambda's 8x H100 on-demand
# instance, which lists no inter-node fabric.
P5 = offer("aws", "p5.48xlarge", 8, 98.32)
LAMBDA_8X = offer("lambda", "gpu_8x_h100_sxm5", 8, 23.92)


def _pretrain(model: str = "llama-3.1-8b", **changes) -> Workload:
    changes.setdefault("rental", Rental(max_gpus=MAX_CLUSTER_GPUS))
    architecture = bundled_models()[model].architecture()
    return Workload(architecture, task=Task.PRETRAIN, train_tokens=10**12, **changes)


def _errors(data: dict, serializer=SizingRequestSerializer) -> dict:
    checked = serializer(data=data)
    checked.is_valid()
    return checked.errors


def test_max_gpus_up_to_4096_is_accepted_for_training_and_4097_refused():
    training = {"model": "llama-3.1-8b", "task": "pretrain"}
    assert _errors({**training, "max_gpus": 4096}) == {}
    assert "max_gpus" in _errors({**training, "max_gpus": 4097})
    assert "max_gpus" in _errors({"model": "llama-3.1-8b", "max_gpus": 16})


def test_the_capacity_planner_keeps_a_replica_to_one_instance():
    errors = _errors({"model": "llama-3.1-8b", "max_gpus": 16}, CapacityRequestSerializer)
    assert "max_gpus" in errors


@pytest.mark.parametrize(
    ("gpu_count", "max_gpus", "says"),
    [
        (0, 4096, "greater than or equal to 1"),
        (-8, 4096, "greater than or equal to 1"),
        (4097, 4096, "less than or equal to 4096"),
        (64, 32, "between 1 and max_gpus (32)"),
        (17, 64, "no whole number of instances"),
    ],
)
def test_a_gpu_count_that_makes_no_cluster_is_refused_with_why(gpu_count, max_gpus, says):
    data = {"model": "llama-3.1-8b", "task": "pretrain", "max_gpus": max_gpus}
    errors = _errors({**data, "gpu_count": gpu_count})
    assert says in " ".join(map(str, errors["gpu_count"]))


def test_train_days_is_a_positive_training_deadline():
    assert "train_days" in _errors({"model": "llama-3.1-8b", "train_days": 3})
    assert "train_days" in _errors({"model": "llama-3.1-8b", "task": "full", "train_days": 0})
    assert _errors({"model": "llama-3.1-8b", "task": "full", "train_days": 0.5}) == {}


def test_counts_are_powers_of_two_up_to_max_gpus_plus_the_named_count():
    assert candidate_counts(_pretrain(rental=Rental())) == [1, 2, 4, 8]
    everything = candidate_counts(_pretrain())
    assert everything == [2**n for n in range(13)]
    assert 24 in candidate_counts(_pretrain(gpu_count=24))
    serving = Workload(bundled_models()["llama-3.1-8b"].architecture())
    assert candidate_counts(serving) == [1, 2, 4, 8]


def test_a_named_gpu_count_is_priced_as_whole_instances_of_one_offer():
    (candidate,) = rank_candidates(_pretrain(gpu_count=24), [H100], {H100.key: [P5]}, [24])
    assert candidate.offer == P5 and candidate.instances == 3
    assert candidate.usd_per_hour == pytest.approx(3 * 98.32)


def test_a_cluster_is_never_rented_from_a_marketplace():
    hosts = dataclasses.replace(offer("vast", "8x-h100", 8, 12.0), provider_kind="marketplace")
    (candidate,) = rank_candidates(_pretrain(), [H100], {H100.key: [hosts, P5]}, [64])
    assert candidate.offer == P5
    (alone,) = rank_candidates(_pretrain(), [H100], {H100.key: [hosts]}, [64])
    assert alone.offer is None
    (one_node,) = rank_candidates(_pretrain(), [H100], {H100.key: [hosts]}, [8])
    assert one_node.offer == hosts  # one instance is still rented where it is cheapest


def _across(count: int, offers=(P5,), **changes):
    workload = _pretrain(**changes)
    (candidate,) = rank_candidates(workload, [H100], {H100.key: list(offers)}, [count])
    return candidate


def test_more_gpus_finish_sooner_but_no_more_efficiently_and_never_below_the_linear_cost():
    node = _across(8)
    ideal_usd = node.usd_per_job.expected  # the same GPU-hours at the same price per GPU
    previous_hours, previous_efficiency = node.training.hours.expected, 1.0
    for count in (16, 64, 256, 1024, 4096):
        candidate = _across(count)
        hours = candidate.training.hours.expected
        efficiency = node.training.hours.expected * 8 / (hours * count)
        assert hours < previous_hours, count
        assert efficiency <= previous_efficiency + 1e-12, count
        assert candidate.usd_per_job.expected >= ideal_usd * (1 - 1e-9), count
        previous_hours, previous_efficiency = hours, efficiency


def test_tensor_parallelism_stays_in_the_node_and_pipeline_stages_only_where_memory_needs_them():
    small = _across(64)
    assert small.parallelism.pipeline_parallel == 1 and small.parallelism.tensor_parallel == 1
    # 405B's 16-bit weights alone are 101 GB per GPU at tensor parallel 8: without sharding
    # them (ZeRO-3, tried last) only pipeline stages across nodes fit it.
    big = _across(128, model="llama-3.1-405b")
    assert big.fits and big.parallelism.tensor_parallel == 8
    assert big.parallelism.pipeline_parallel > 1 and big.training.scale_out.bubble_fraction > 0
    pinned = _across(128, model="llama-3.1-405b", zero_stage=0)
    assert not pinned.fits  # a pinned stage is the layout asked for: nothing added to it


def test_a_cluster_over_a_slow_network_takes_longer_and_says_what_it_assumed():
    fast = _across(256, offers=[P5])
    slow = _across(256, offers=[LAMBDA_8X])
    assert slow.training.hours.expected > fast.training.hours.expected
    assert any("lists no inter-node fabric" in warning for warning in slow.warnings)
    notes = slow.training.scale_out.assumptions()
    assert any("assumed 100 Gbps Ethernet" in note for note in notes)
    assert any("3,200 Gbps" in note for note in fast.training.scale_out.assumptions())


def test_with_both_networks_on_offer_the_cheaper_run_is_chosen_not_the_cheaper_hour():
    both = _across(256, offers=[P5, LAMBDA_8X])
    assert both.offer == P5  # a quarter of the price per hour, but collectives over 100 Gbps


def test_a_moe_pays_its_expert_all_to_all_across_nodes():
    fast = _across(512, model="qwen3-235b-a22b", offers=[P5])
    slow = _across(512, model="qwen3-235b-a22b", offers=[LAMBDA_8X])
    assert fast.training.scale_out.all_to_all_seconds.expected > 0
    assert (
        slow.training.scale_out.all_to_all_seconds.expected
        > fast.training.scale_out.all_to_all_seconds.expected
    )


def _deadline(days: float, max_gpus: int = MAX_CLUSTER_GPUS):
    workload = _pretrain(train_days=days, rental=Rental(max_gpus=max_gpus))
    return recommend(workload, [H100], {H100.key: [P5]})


def test_train_days_picks_the_smallest_cluster_that_finishes_in_time():
    result = _deadline(30)
    (pick,) = result.deadline
    assert pick.fits and pick.days.expected <= 30 and pick.provider == "aws"
    by_count = {c.gpu_count: c for c in result.candidates if c.fits}
    smaller = [count for count in by_count if count < pick.gpu_count]
    assert smaller and all(by_count[c].training.hours.expected / 24 > 30 for c in smaller)
    assert pick.usd_per_job.expected == pytest.approx(by_count[pick.gpu_count].usd_per_job.expected)
    # The answer recommends the run that meets the deadline, not the cheapest at any length.
    assert (result.best.device.key, result.best.gpu_count) == (pick.device.key, pick.gpu_count)


def test_train_days_says_when_no_cluster_within_max_gpus_finishes_in_time():
    result = _deadline(1, max_gpus=64)
    (pick,) = result.deadline
    assert not pick.fits and pick.gpu_count == 64
    assert pick.sentence(1).startswith("none within 1 days")
    assert sizing_report(result)["deadline"]["fits_anywhere"] is False


def test_the_offer_reports_its_inter_node_fabric_with_its_source():
    network = offer_report(P5)["network"]
    assert network["network_gbps"] == 3200 and network["fabric"].startswith("EFA")
    assert network["source_url"].startswith("https://aws.amazon.com/ec2/instance-types/p5")
    unknown = offer_report(LAMBDA_8X)["network"]
    assert unknown["assumed"] and unknown["network_gbps"] == 100


@pytest.mark.django_db
def test_the_api_answers_a_cluster_with_the_fabric_on_each_offer(api):
    response = api.post(
        URL,
        {
            "model": "llama-3.1-70b",
            "task": "pretrain",
            "max_gpus": 4096,
            "train_days": 30,
            "providers": ["aws"],
        },
        format="json",
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    clusters = [c for c in body["candidates"] if c["gpu_count"] > 8]
    assert clusters and all(c["offer"]["network"]["fabric"] for c in clusters)
    assert all(c["instances"] == c["gpu_count"] // 8 for c in clusters)
    assert body["deadline"]["picks"] and body["deadline"]["train_days"] == 30


@pytest.mark.django_db
def test_the_api_refuses_4097_gpus(api):
    response = api.post(
        URL, {"model": "llama-3.1-8b", "task": "pretrain", "max_gpus": 4097}, format="json"
    )
    assert response.status_code == 400 and "max_gpus" in response.json()


@pytest.mark.django_db
def test_the_page_shows_clusters_with_their_network_and_the_deadline(catalog):
    query = {
        "model": "llama-3.1-70b",
        "task": "pretrain",
        "max_gpus": "4096",
        "train_days": "30",
        "providers": "aws",
    }
    response = Client().get("/size/", query)
    assert response.status_code == 200
    html = response.content.decode()
    assert "Within 30 days" in html
    assert "EFA" in html and "instances" in html


@pytest.mark.django_db
def test_size_takes_gpu_count_and_train_days_and_prints_the_deadline(catalog):
    out = StringIO()
    arguments = ["--model", "llama-3.1-8b", "--task", "pretrain", "--max-gpus", "64"]
    call_command("size", *arguments, "--gpu-count", "24", "--train-days", "30", stdout=out)
    assert "Within 30 days:" in out.getvalue()
    with pytest.raises(CommandError, match="gpu_count"):
        call_command("size", *arguments, "--gpu-count", "17", stdout=StringIO())


def test_a_cluster_is_compared_with_buying_at_its_instances_price_per_gpu_hour():
    from advisor.domain.planning.ownership import OwnershipInputs, purchase_prices_load
    from advisor.domain.planning.rent_vs_buy import rent_vs_buy

    price = purchase_prices_load()["H100-SXM"]
    rental, inputs = Rental(max_gpus=4096), OwnershipInputs()
    result = rent_vs_buy(H100, 64, [P5, LAMBDA_8X], rental=rental, price=price, inputs=inputs)
    (on_demand,) = result.break_even
    assert on_demand.offer == LAMBDA_8X  # $2.99 a GPU-hour against p5's $12.29
    assert "no rentable offer" not in result.sentence()
