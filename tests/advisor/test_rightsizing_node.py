"""The machine a job ran on (`node_of`): every GPU present, which ran the job, and the idle-GPU
finding, from real traces (tests/fixtures/traces/README.md says where each came from)."""

import dataclasses
from pathlib import Path

from advisor.domain.rightsizing import node_of, observe, verdict
from jobs.domain.traces import analyze_traces

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
NODE_4X = TRACES / "pipit" / "saxpy_perlmutter0_4gpu_node.sqlite"
NSYS_1X = TRACES / "pipit/pipit/tests/data/saxpy-mpi-cuda_nsys_perlmutter0.sqlite"
ONE_RANK_OF_ONE = (
    TRACES / "hta/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
)
ONE_RANK_OF_TWO = TRACES / "hta/tests/data/nccl_parser_config/nccl_data.json.gz"
DLRM = sorted((TRACES / "param/et_replay/tests/inputs/dlrm_kineto_8rank").glob("*.json.gz"))


def _ranks(*paths: Path):
    return analyze_traces(list(paths)).ranks


def test_the_4_gpu_nsys_export_says_3_of_4_gpus_were_idle_for_the_whole_window():
    node = node_of(_ranks(NODE_4X))
    assert node.present_gpus == 4 and node.needed_gpus == 1 and node.idle_gpus == 3
    assert [(gpu.index, gpu.kernel_count, gpu.used) for gpu in node.gpus] == [
        (0, 5, True),
        (1, 0, False),
        (2, 0, False),
        (3, 0, False),
    ]
    assert {gpu.name for gpu in node.gpus} == {"NVIDIA A100-SXM4-40GB"}
    assert node.finding == (
        "3 of 4 GPUs were idle for the whole window (GPUs 1, 2 and 3 ran no kernels): "
        "the job used 1"
    )


def test_an_export_listing_only_the_gpu_it_used_has_no_finding():
    node = node_of(_ranks(NSYS_1X))
    assert node.present_gpus == 1 and node.idle_gpus == 0 and node.finding == ""


def test_kineto_device_properties_list_every_gpu_and_the_one_a_lone_rank_used():
    # DDP with world size 1 on an 8x V100 machine: one GPU ran everything.
    node = node_of(_ranks(ONE_RANK_OF_ONE))
    assert node.present_gpus == 8 and node.idle_gpus == 7
    assert [gpu.index for gpu in node.gpus if gpu.used] == [0]
    assert node.gpus[0].kernel_count > 0 and node.gpus[0].rank == 0
    assert node.finding.startswith("7 of 8 GPUs were idle for the whole window")


def test_gpus_of_ranks_not_uploaded_are_not_called_idle():
    # Rank 0 of a 2-rank job: one of the seven GPUs without kernels ran rank 1.
    node = node_of(_ranks(ONE_RANK_OF_TWO))
    assert node.needed_gpus == 2 and node.idle_gpus == 6
    assert node.finding.startswith("at least 6 of 8 GPUs were idle: the job has 2 ranks")


def test_all_eight_dlrm_ranks_use_all_eight_gpus():
    node = node_of(_ranks(*DLRM))
    assert node.present_gpus == 8 and all(gpu.used for gpu in node.gpus)
    assert node.idle_gpus == 0 and node.finding == ""


def test_ranks_spanning_machines_make_no_finding():
    (rank,) = _ranks(ONE_RANK_OF_ONE)
    node = node_of([dataclasses.replace(rank, world_size=16)])
    assert node.idle_gpus == 0 and node.finding == ""


def _smi_log(tmp_path: Path, utilisation_by_gpu: dict[int, str]) -> Path:
    lines = ["timestamp, name, index, utilization.gpu [%], memory.used [MiB], memory.total [MiB]"]
    for second in range(5):
        for index, utilisation in utilisation_by_gpu.items():
            lines.append(
                f"2024/05/01 10:00:0{second}.000, NVIDIA A100-SXM4-80GB, {index}, "
                f"{utilisation}, 2000 MiB, 81920 MiB"
            )
    path = tmp_path / "smi.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_an_nvidia_smi_gpu_that_never_showed_utilisation_is_idle_and_left_out(tmp_path):
    ranks = _ranks(_smi_log(tmp_path, {0: "90 %", 1: "0 %"}))
    node = node_of(ranks)
    assert [(gpu.index, gpu.used, gpu.kernel_count) for gpu in node.gpus] == [
        (0, True, None),
        (1, False, None),
    ]
    assert node.finding == (
        "1 of 2 GPUs were idle for the whole window (GPU 1 showed no utilisation): the job used 1"
    )
    assert observe(ranks).gpu_count == 1
    # The verdict judges the GPU that worked, not a mean diluted by the idle one.
    (mean,) = [e.value for e in verdict(ranks).evidence if e.name == "mean utilisation"]
    assert mean == 90


def test_a_gpu_whose_utilisation_was_never_reported_is_not_called_idle(tmp_path):
    node = node_of(_ranks(_smi_log(tmp_path, {0: "90 %", 1: "[N/A]"})))
    assert [gpu.used for gpu in node.gpus] == [True, None]
    assert node.idle_gpus == 0 and node.finding == ""


def test_a_summary_that_lists_no_gpus_still_names_the_one_it_ran_on():
    (rank,) = _ranks(NSYS_1X)
    node = node_of([dataclasses.replace(rank, gpus_present=[])])
    (gpu,) = node.gpus
    assert (gpu.index, gpu.name, gpu.kernel_count, gpu.used) == (0, rank.gpu_name, 5, True)
