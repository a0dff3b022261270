"""Projection and recommendation: the measured job moved onto other GPUs, priced per step.

GPU figures are the project's catalogue (catalog/data/gpus.csv) and offer prices hourly
on-demand prices from the bundled SkyPilot snapshot, both from tests/advisor/devices.py. The
jobs are hand-built ObservedJobs.

No H100 / MI300X pair of one workload exists among the sample traces (shared/data/traces has
H100 traces only from Kineto's docs and an MI250 toy, no MI300X), so the cross-check of a
projection against a second card's measurement is not made here.
"""

from pathlib import Path

import pytest

from advisor.domain.rightsizing import ObservedJob, observe, project, recommendation
from advisor.domain.rightsizing.projection import UNCERTAINTY
from jobs.domain.traces import analyze_traces
from tests.advisor.devices import GPUS, OFFERS, made_up_device, offer

ROOT = Path(__file__).resolve().parents[2]
TRACES = ROOT / "tests/fixtures/traces"
GIB = 2**30


H100, A100_40, A100_80, L4, A10, A10G, T4 = (
    GPUS[key] for key in ("H100-SXM", "A100-40GB-SXM", "A100-80GB-SXM", "L4", "A10", "A10G", "T4")
)
CANDIDATES = [A100_40, A100_80, L4, A10, A10G, T4, GPUS["L40S"]]


def _job(**parts) -> ObservedJob:
    defaults = {
        "compute_s": 0.0,
        "memory_s": 0.0,
        "communication_s": 0.0,
        "host_idle_s": 0.0,
        "precision": "bf16",
        "peak_memory_bytes": None,
    }
    defaults.update(parts)
    step_s = sum(defaults[k] for k in ("compute_s", "memory_s", "communication_s", "host_idle_s"))
    return ObservedJob(step_s=step_s, **defaults)


def _by_key(projections):
    return {projection.device.key: projection for projection in projections}


IDLE_SMALL = _job(compute_s=0.02, memory_s=0.03, host_idle_s=0.95, peak_memory_bytes=3.6 * GIB)
COMPUTE_BOUND = _job(compute_s=0.85, memory_s=0.10, host_idle_s=0.05, peak_memory_bytes=30 * GIB)


def test_an_idle_small_memory_job_is_steered_to_a_cheaper_gpu():
    projections = project(IDLE_SMALL, H100, CANDIDATES, OFFERS)
    best = projections[0]
    assert best.device.key == "L4"  # cheapest per step, and 3.6 GiB fits its 24 GiB
    current = _by_key(projections)["H100-SXM"]
    saving = (
        1 - best.best_offer.usd_per_1000_steps.high / current.best_offer.usd_per_1000_steps.expected
    )
    assert saving > 0.5
    sentence = recommendation(IDLE_SMALL, projections)
    assert sentence.startswith("the GPU is idle 95% of the time and peaks at 3.6 GB of 80 GB: ")
    assert "an L4 costs" in sentence
    assert "% less per step" in sentence


def test_a_compute_bound_job_is_not_moved_to_a_slower_gpu_cheaper_per_hour():
    projections = project(COMPUTE_BOUND, H100, CANDIDATES, OFFERS)
    current = _by_key(projections)["H100-SXM"]
    assert projections[0] is current
    cheaper_per_hour = [
        projection
        for projection in projections
        if projection.best_offer and projection.best_offer.offer.usd_per_hour < 4.29
    ]
    assert [projection.device.key for projection in cheaper_per_hour] == ["A100-40GB-SXM"]
    for projection in cheaper_per_hour:
        assert projection.step_s.expected > 2 * current.step_s.expected
        assert (
            projection.best_offer.usd_per_1000_steps.expected
            > current.best_offer.usd_per_1000_steps.expected
        )
    sentence = recommendation(COMPUTE_BOUND, projections)
    assert sentence == "keep the H100 SXM: 95% busy, nothing cheaper is faster per dollar"


def test_a_job_is_never_recommended_onto_a_gpu_its_peak_does_not_fit():
    # Idle, so the smallest GPU would be cheapest per step, but 22 GiB + 10 % does not fit the
    # 22.0 GiB CUDA sees on an L4 (23,034 MiB in nvidia-smi less the driver's 468), nor an A10.
    job = _job(compute_s=0.02, memory_s=0.03, host_idle_s=0.95, peak_memory_bytes=22 * GIB)
    projections = project(job, H100, CANDIDATES, OFFERS)
    by_key = _by_key(projections)
    for key in ("L4", "A10", "A10G", "T4"):
        assert not by_key[key].fits
        assert by_key[key].step_s is None and by_key[key].offers == []
    assert by_key["L4"].reason == (
        "needs 24.2 GiB (peak 22.0 GiB + 10 % headroom); L4 offers 22.0 GiB usable"
    )
    assert [p.fits for p in projections] == sorted((p.fits for p in projections), reverse=True)
    sentence = recommendation(job, projections)
    assert "L4" not in sentence and "A10 " not in sentence
    assert "an A100 40GB SXM costs" in sentence


def test_the_memory_limit_is_what_cuda_sees_on_the_card_with_headroom():
    usable_gib = (23_034 - 468) / 1024  # the L4's nvidia-smi total less the driver's share
    fits = _job(host_idle_s=1.0, peak_memory_bytes=int(usable_gib / 1.1 * GIB) - 1)
    too_big = _job(host_idle_s=1.0, peak_memory_bytes=int(usable_gib / 1.1 * GIB) + 4096)
    assert _by_key(project(fits, H100, [L4], {}))["L4"].fits
    assert not _by_key(project(too_big, H100, [L4], {}))["L4"].fits
    assert _by_key(project(too_big, H100, [L4], {}, headroom_fraction=0.0))["L4"].fits


def test_without_a_measured_peak_only_gpus_as_large_as_the_current_one_fit():
    job = _job(host_idle_s=1.0)
    by_key = _by_key(project(job, A100_40, [L4, A100_80, H100], OFFERS))
    assert not by_key["L4"].fits
    assert "peak memory was not measured" in by_key["L4"].reason
    assert by_key["A100-80GB-SXM"].fits and by_key["H100-SXM"].fits


def test_each_part_scales_by_its_own_ratio_with_15_percent_either_way():
    job = _job(compute_s=1.0, memory_s=1.0, communication_s=1.0, host_idle_s=1.0, gpu_count=8)
    projection = _by_key(project(job, A100_80, [H100], {}))["H100-SXM"]
    compute = 312 / 989.5  # bf16 dense TFLOPS, A100 / H100
    memory = 2039 / 3350  # GB/s
    link = 600 / 900  # NVLink 3 / NVLink 4, GB/s
    scaled = compute + memory + link
    assert projection.step_s.expected == pytest.approx(1.0 + scaled)
    assert projection.step_s.low == pytest.approx(1.0 + scaled * (1 - UNCERTAINTY))
    assert projection.step_s.high == pytest.approx(1.0 + scaled * (1 + UNCERTAINTY))
    current = _by_key(project(job, A100_80, [H100], {}))["A100-80GB-SXM"]
    assert current.is_current
    assert (current.step_s.low, current.step_s.high) == (4.0, 4.0)  # measured: no range


def test_communication_over_pcie_is_slower_than_over_nvlink():
    job = _job(communication_s=1.0, gpu_count=8, peak_memory_bytes=GIB)
    pcie = _by_key(project(job, H100, [GPUS["L40S"]], {}))["L40S"]
    assert pcie.step_s.expected == pytest.approx(900 / 64)  # NVLink 4 vs PCIe Gen4 x16
    bridged = GPUS["A100-80GB-PCIE"]  # "NVLink bridge (2 GPUs); PCIe Gen4 64 GB/s"
    assert bridged.link_gb_s(2) == 600
    assert bridged.link_gb_s(8) == 64


def test_cost_per_1000_steps_is_the_whole_instance_price_times_step_time():
    # AWS p3.8xlarge (4x V100: $12.24/h in us-east-1, $13.22/h in eu-west-1) and p3.16xlarge
    # (8x, $24.48/h) in the bundled SkyPilot snapshot: a 4-GPU job rents the first whole; the
    # bigger one's per-GPU share is not a price anyone pays for it.
    job = _job(host_idle_s=2.0, gpu_count=4)
    offers = {
        "V100-16GB": [
            offer("aws", "p3.8xlarge", 4, 13.22),
            offer("aws", "p3.8xlarge", 4, 12.24),
            offer("aws", "p3.16xlarge", 8, 24.48),
        ]
    }
    (current,) = project(job, GPUS["V100-16GB"], [], offers)
    assert [cost.offer.usd_per_hour for cost in current.offers] == [12.24, 13.22]
    # $12.24 per hour for the whole instance x 2 s x 1000 steps / 3600 s per hour
    assert current.offers[0].usd_per_1000_steps.expected == pytest.approx(12.24 * 2.0 * 1000 / 3600)
    assert current.gpu_count == 4


def test_precision_decides_which_tflops_are_compared():
    unknown = _by_key(project(_job(compute_s=1.0, precision="unknown"), H100, [A100_80], {}))
    assert unknown["A100-80GB-SXM"].step_s.expected == pytest.approx(989.5 / 312)
    assert "assumes bf16" in unknown["A100-80GB-SXM"].notes[0]
    bf16 = _job(compute_s=1.0, precision="bf16", peak_memory_bytes=GIB)
    on_t4 = _by_key(project(bf16, A10G, [T4], {}))["T4"]
    assert on_t4.step_s.expected == pytest.approx(125 / 65)  # T4 has no BF16: its fp16 figure
    assert on_t4.notes == ["T4 has no BF16 units: assumes the job runs fp16"]
    fp32 = _by_key(project(_job(compute_s=1.0, precision="fp32"), A100_80, [H100], {}))
    assert fp32["H100-SXM"].step_s.expected == pytest.approx(19.5 / 67)


def test_a_missing_catalogue_figure_is_not_guessed():
    # A part whose FP32 figure the catalogue lacks (made up: the catalogue's rows change).
    job = _job(compute_s=1.0, precision="fp32")
    unsourced = made_up_device("no-fp32", memory_gib=180, bandwidth_gb_s=8000)
    (current, other) = project(job, H100, [unsourced], {"no-fp32": [offer("a", "b", 1, 1)]})
    assert current.is_current
    assert other.step_s is None and other.offers == []
    assert other.notes[-1] == "the catalogue has no fp32 TFLOPS for no-fp32"


def test_observed_from_a_real_trace_adds_up_per_step():
    trace = (
        TRACES / "hta/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
    )
    (rank,) = analyze_traces([trace]).ranks
    job = observe([rank])
    assert job.per_step and rank.last_step_dropped
    assert job.step_s == pytest.approx(rank.kernel_time_us / 1e6 / (rank.profiler_steps - 1))
    parts = job.compute_s + job.memory_s + job.communication_s + job.host_idle_s
    assert parts == pytest.approx(job.step_s)
    assert job.precision == "fp32"  # volta_sgemm, cudnn fp32 engines


def test_observed_from_nvidia_smi_is_unattributed_busy_time():
    job = observe(analyze_traces([TRACES / "nvidia-smi/query_gpu_units_2gpus.csv"]).ranks)
    assert job.unattributed_s == pytest.approx(0.53 * 20)  # mean of 96 % and 10 % over 20 s
    assert job.host_idle_s == pytest.approx(0.47 * 20)
    assert job.peak_memory_bytes == 62000 * 2**20
    assert not job.per_step
    # Busy time of unknown kind scales by the worse of the compute and bandwidth ratios.
    h100 = _by_key(project(job, A100_80, [H100], {}))["H100-SXM"]
    slower_ratio = max(312 / 989.5, 2039 / 3350)
    assert h100.step_s.expected == pytest.approx(
        job.host_idle_s + job.unattributed_s * slower_ratio
    )
