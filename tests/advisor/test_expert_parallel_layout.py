"""A mixture-of-experts model's full training across nodes splits its routed experts over GPUs
(expert parallelism, as Megatron's MoE recipes do) instead of holding every expert on every GPU
(issue 23: the published Megatron-Bridge MoE runs were 1.4x to 8x faster than the
tensor-parallel layout the engine had)."""

import pytest

from advisor.domain.sizing.bundled_models import bundled_models
from advisor.domain.sizing.cluster_layout import expert_parallel_options
from advisor.domain.sizing.layout import Parallelism
from advisor.domain.sizing.precision import Dtype
from advisor.domain.sizing.recommend import rank_candidates
from advisor.domain.sizing.rental import MAX_CLUSTER_GPUS, Rental
from advisor.domain.sizing.report import candidate_report
from advisor.domain.sizing.speed.cluster import Cluster
from advisor.domain.sizing.speed.training import training_time
from advisor.domain.sizing.training_memory import training_terms
from advisor.domain.sizing.workload import Task, Workload
from tests.advisor.devices import GPUS, offer

H100 = GPUS["H100-SXM"]
P5 = offer("aws", "p5.48xlarge", 8, 98.32)


def _pretrain(model: str, task: Task = Task.PRETRAIN, **changes) -> Workload:
    architecture = bundled_models()[model].architecture()
    return Workload(
        architecture,
        task=task,
        train_tokens=10**11,
        context_tokens=4096,
        rental=Rental(max_gpus=MAX_CLUSTER_GPUS),
        **changes,
    )


def _candidate(workload: Workload, count: int):
    (candidate,) = rank_candidates(workload, [H100], {H100.key: [P5]}, [count])
    return candidate


def test_a_moe_too_big_to_replicate_splits_its_experts_instead_of_tensor_parallel_8():
    # Qwen3-30B-A3B's 16-bit weights alone are 61 GB on every GPU when replicated.
    candidate = _candidate(_pretrain("qwen3-30b-a3b", weight_dtype=Dtype.FP8), 16)
    assert candidate.fits
    assert candidate.parallelism.tensor_parallel == 1
    assert candidate.parallelism.expert_parallel > 1
    assert "expert parallel" in candidate.parallelism.describe()


def test_split_experts_train_faster_than_the_tensor_parallel_layout_that_also_fits():
    workload = _pretrain("qwen3-30b-a3b", weight_dtype=Dtype.FP8)
    chosen = _candidate(workload, 16).parallelism
    tensor_parallel = training_time(workload, H100, Parallelism(16, 8, 0))
    assert training_time(workload, H100, chosen).hours.expected < (tensor_parallel.hours.expected)


def test_expert_parallelism_divides_the_routed_experts_weights_and_gradients_only():
    workload = _pretrain("qwen3-30b-a3b")
    whole = training_terms(workload, Parallelism(16, 1, 1))
    split = training_terms(workload, Parallelism(16, 1, 1, expert_parallel=4))
    routed = workload.architecture.params_routed_experts
    # 16-bit weights and gradients, 3/4 of the experts' held elsewhere.
    assert whole.weights - split.weights == pytest.approx(routed * 2 * 3 / 4)
    assert whole.gradients - split.gradients == pytest.approx(routed * 2 * 3 / 4)
    assert split.optimizer_states == pytest.approx(whole.optimizer_states)  # ZeRO-1 over all


@pytest.mark.parametrize("count", [16, 64, 512])
def test_expert_parallel_degrees_are_powers_of_two_that_divide_the_group_and_the_experts(count):
    workload = _pretrain("gpt-oss-120b")
    experts = workload.architecture.routed_expert_count
    options = expert_parallel_options(workload, count, 1)
    assert options
    for option in options:
        ep = option.expert_parallel
        assert ep & (ep - 1) == 0 and 2 <= ep <= experts
        assert option.data_parallel % ep == 0
    stages = [option.pipeline_parallel for option in options]
    assert stages == sorted(stages)  # the fewest pipeline stages tried first


def test_dense_models_and_adapter_training_get_no_expert_parallel_layout():
    assert expert_parallel_options(_pretrain("llama-3.1-8b"), 64, 1) == []
    assert expert_parallel_options(_pretrain("qwen3-30b-a3b", task=Task.LORA), 64, 1) == []


def test_the_answer_reports_the_expert_parallel_degree_it_chose():
    candidate = _candidate(_pretrain("qwen3-30b-a3b", weight_dtype=Dtype.FP8), 16)
    report = candidate_report(candidate)
    assert report["expert_parallel"] == candidate.parallelism.expert_parallel > 1
    assert f"expert parallel {report['expert_parallel']}" in report["parallelism"]


def test_a_node_does_not_reduce_the_gradients_of_experts_other_nodes_hold():
    workload = _pretrain("qwen3-30b-a3b", weight_dtype=Dtype.FP8)
    cluster = Cluster(8, P5.network)

    def collectives(ep: int) -> float:
        layout = Parallelism(64, 1, 1, expert_parallel=ep)
        return training_time(workload, H100, layout, cluster).scale_out.collective_seconds.expected

    # EP 8 keeps every expert on each node; EP 32 leaves a node a quarter of them.
    assert collectives(32) < collectives(8)
    assert collectives(8) == pytest.approx(collectives(2))


@pytest.mark.parametrize("model", ["qwen1.5-moe-a2.7b", "granite-3.1-3b-a800m", "deepseek-v2"])
def test_expert_parallelism_splits_the_experts_evenly(model):
    workload = _pretrain(model)
    experts = workload.architecture.routed_expert_count
    for option in expert_parallel_options(workload, 256, 1):
        assert experts % option.expert_parallel == 0, (experts, option.expert_parallel)


def test_a_moe_run_on_more_gpus_is_never_slower():
    workload = _pretrain("qwen3-30b-a3b")
    hours = [_candidate(workload, count).training.hours.expected for count in (16, 32, 64, 128)]
    assert hours == sorted(hours, reverse=True)


def test_a_pipeline_stage_dispatches_only_for_its_own_moe_layers():
    workload = _pretrain("gpt-oss-120b")
    cluster = Cluster(8, P5.network)

    def all_to_all(stages: int) -> float:
        layout = Parallelism(128, 1, 1, pipeline_parallel=stages, expert_parallel=16)
        return training_time(workload, H100, layout, cluster).scale_out.all_to_all_seconds.expected

    # Twice the stages: half the data-parallel ranks (twice the tokens each), half the layers.
    assert all_to_all(2) == pytest.approx(all_to_all(1))


def test_expert_parallelism_counts_data_parallel_ranks_not_gpus():
    workload = _pretrain("qwen3-30b-a3b")
    cluster = Cluster(8, P5.network)

    def collectives(ep: int) -> float:
        layout = Parallelism(64, 2, 1, expert_parallel=ep)
        return training_time(workload, H100, layout, cluster).scale_out.collective_seconds.expected

    # At tensor parallel 2 a node holds 4 ranks: EP 8 spans two nodes, each holding half.
    assert collectives(8) < collectives(4)
