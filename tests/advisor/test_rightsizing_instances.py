"""Right-sizing prices instances a team can rent: the job's GPU count, the whole instance's price.

Offers are built here, not read from the bundled data (whose rows other work changes). Prices
are the bundled SkyPilot snapshot's (catalog/data/skypilot/, skypilot-catalog v8): AWS
p3.2xlarge (1x V100 16GB) $3.06/h and p3.16xlarge (8x) $24.48/h in us-east-1, vast's
8x-Tesla_V100-32-65536 $0.85/h in Sweden, 4x-A100_SXM4-32-65536 (4x A100 40GB) $3.09/h in
Oregon and 1x-A100_SXM4-32-65536 $0.76/h in Georgia, Lambda gpu_1x_h100_sxm5 $4.29/h and AWS
p5.48xlarge (8x H100) $55.04/h in us-east-1.
"""

import pytest

from advisor.domain.rightsizing import ObservedJob, idle_gpus_priced, project, recommendation
from tests.advisor.devices import GPUS, made_up_device, offer

V100, A100_40, H100 = GPUS["V100-16GB"], GPUS["A100-40GB-SXM"], GPUS["H100-SXM"]
GIB = 2**30
P3_2X = offer("aws", "p3.2xlarge", 1, 3.06)
P3_16X = offer("aws", "p3.16xlarge", 8, 24.48)
VAST_8X = offer("vast", "8x-Tesla_V100-32-65536", 8, 0.85)


def _job(gpu_count: int = 1, **parts) -> ObservedJob:
    values = {"compute_s": 0.2, "memory_s": 0.3, "communication_s": 0.0, "host_idle_s": 0.5}
    values.update(parts)
    return ObservedJob(
        step_s=sum(values.values()),
        precision="bf16",
        peak_memory_bytes=4 * GIB,
        gpu_count=gpu_count,
        **values,
    )


def _current(projections):
    return next(projection for projection in projections if projection.is_current)


def test_a_one_gpu_job_is_priced_on_one_gpu_instances_not_a_share_of_an_eight_gpu_one():
    # The vast 8x instance is $0.106 per GPU-hour, far below p3.2xlarge's $3.06; but a 1-GPU job
    # cannot rent an eighth of it.
    current = _current(project(_job(), V100, [], {"V100-16GB": [VAST_8X, P3_2X, P3_16X]}))
    assert [cost.offer for cost in current.offers] == [P3_2X]
    assert current.best_offer.usd_per_1000_steps.expected == pytest.approx(3.06 * 1.0 / 3.6)
    assert current.notes == []


def test_without_an_instance_of_the_jobs_size_the_cheapest_larger_one_is_priced_whole():
    current = _current(project(_job(), V100, [], {"V100-16GB": [P3_16X, VAST_8X]}))
    assert [cost.offer for cost in current.offers] == [VAST_8X]
    # The whole instance's $0.85/h, not its per-GPU $0.106: 1.0 s x 1000 steps / 3600 s.
    assert current.best_offer.usd_per_1000_steps.expected == pytest.approx(0.85 * 1000 / 3600)
    assert current.notes == [
        "no 1-GPU V100 16GB instance is offered: priced on vast 8x-Tesla_V100-32-65536 whole, "
        "$0.85/h"
    ]


def test_instances_smaller_than_the_job_are_never_priced():
    current = _current(project(_job(gpu_count=2), V100, [], {"V100-16GB": [P3_2X]}))
    assert current.offers == []
    assert current.notes == ["no instance with 2 V100 16GB GPUs or more is offered"]


def test_candidates_are_priced_at_the_jobs_gpu_count():
    offers = {
        "V100-16GB": [P3_2X],
        "H100-SXM": [
            offer("lambda", "gpu_1x_h100_sxm5", 1, 4.29),
            offer("aws", "p5.48xlarge", 8, 55.04),
        ],
    }
    by_key = {p.device.key: p for p in project(_job(), V100, [H100], offers)}
    assert [cost.offer.instance_type for cost in by_key["H100-SXM"].offers] == ["gpu_1x_h100_sxm5"]
    assert {p.gpu_count for p in by_key.values()} == {1}


def test_a_machine_with_idle_gpus_is_priced_whole_beside_the_instance_the_job_needs():
    # A 1-GPU job measured on a 4x A100 machine: the current GPU is priced at the machine's
    # size, and the same GPU again on a 1-GPU instance, at the measured step time.
    offers = {
        "A100-40GB-SXM": [
            offer("vast", "4x-A100_SXM4-32-65536", 4, 3.09),
            offer("vast", "1x-A100_SXM4-32-65536", 1, 0.76),
        ]
    }
    job = _job(host_idle_s=3.5)
    projections = project(job, A100_40, [], offers, node_gpu_count=4)
    current = _current(projections)
    resized = next(p for p in projections if not p.is_current)
    assert (current.gpu_count, resized.gpu_count) == (4, 1)
    assert resized.device is A100_40 and resized.step_s == current.step_s
    assert [c.offer.instance_type for c in current.offers] == ["4x-A100_SXM4-32-65536"]
    assert [c.offer.instance_type for c in resized.offers] == ["1x-A100_SXM4-32-65536"]
    assert projections[0] is resized
    sentence = recommendation(job, projections)
    # 1 - 0.76 / 3.09 = 75 % less for the same measured step.
    assert sentence.endswith(
        "the same A100 40GB SXM on a 1-GPU instance costs 75% less per step than the 4-GPU "
        "machine it ran on"
    )


def test_without_idle_gpus_the_current_gpu_is_listed_once():
    projections = project(_job(), V100, [], {"V100-16GB": [P3_2X]}, node_gpu_count=1)
    assert [p.is_current for p in projections] == [True]


def test_a_saving_above_99_5_percent_is_not_rounded_to_100():
    # Prices chosen for the arithmetic, not quoted: $30/h for the 8-GPU machine, $0.09/h for one
    # GPU: 1 - 0.09 / 30 = 99.7 % less.
    offers = {"V100-16GB": [offer("x", "eight", 8, 30.0), offer("x", "one", 1, 0.09)]}
    job = _job()
    sentence = recommendation(job, project(job, V100, [], offers, node_gpu_count=8))
    assert "costs 99.7% less per step than the 8-GPU machine it ran on" in sentence


def test_without_a_price_for_the_machine_the_same_gpu_on_the_jobs_size_is_named():
    # No 4-GPU (or larger) A100 instance on offer; vast's 1x A100 SXM4 40GB at $0.76/h is.
    offers = {"A100-40GB-SXM": [offer("vast", "1x-A100_SXM4-32-65536", 1, 0.76)]}
    job = _job()
    sentence = recommendation(job, project(job, A100_40, [], offers, node_gpu_count=4))
    assert sentence.endswith(
        "no 4-GPU A100 40GB SXM instance is priced; cheapest per step is an A100 40GB SXM on a "
        f"1-GPU instance at ${0.76 * 1000 / 3600:.2f} per 1,000 steps, at about the same speed"
    )


def test_a_candidate_with_low_confidence_specs_says_so():
    doubtful = made_up_device(
        "A2-ish", bf16_tflops=100.0, supports_bf16=True, confidence="low", spec_notes="no datasheet"
    )
    current = made_up_device("here", bf16_tflops=100.0, supports_bf16=True)
    candidate = next(p for p in project(_job(), current, [doubtful], {}) if not p.is_current)
    assert candidate.notes[-1] == "A2-ish's specs are low confidence: no datasheet"


def test_the_idle_gpu_finding_prices_the_instance_the_job_needs_beside_the_machine():
    offers = {
        "A100-40GB-SXM": [
            offer("vast", "4x-A100_SXM4-32-65536", 4, 3.09),
            offer("vast", "1x-A100_SXM4-32-65536", 1, 0.76),
        ]
    }
    job = _job(host_idle_s=3.5)  # a 4.0 s step
    projections = project(job, A100_40, [], offers, node_gpu_count=4)
    assert idle_gpus_priced("3 of 4 GPUs were idle", projections) == (
        "3 of 4 GPUs were idle; the A100 40GB SXM on a 1-GPU instance (vast 1x-A100_SXM4-32-65536,"
        f" $0.76/h) costs ${0.76 * 4.0 / 3.6:.2f} per 1,000 steps against ${3.09 * 4.0 / 3.6:.2f}"
        " on the 4-GPU machine (vast 4x-A100_SXM4-32-65536, $3.09/h)"
    )
    assert idle_gpus_priced("", projections) == ""
