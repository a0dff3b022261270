"""The measured job moved onto other GPUs: step time and cost per 1,000 steps, as ranges.

Each part of the measured step scales by its own ratio of current to candidate figures:

- matrix math (compute_s) by dense TFLOPS at the precision the kernels ran in (bf16 when their
  names do not say, with a note); a GPU without that precision's units runs the next one down
  (`Device.dense_tflops`). A non-ML job (no GEMM, convolution or attention in an ML precision;
  see `observed`) is never assumed bf16: its computation kernels scale by the slower of the
  bandwidth ratio and the FP64 peak's (when their names say double) or the FP32 peak's;
- copies and bandwidth-bound kernels (memory_s) by memory bandwidth, GB/s;
- exposed communication by the link between the job's GPUs: an NVLink-class fabric (NVLink,
  Infinity Fabric, ...) at its catalogued GB/s, PCIe at its, a bridged pair at the bridge's
  until a third GPU puts PCIe in the path (`Device.link_gb_s`);
- busy time of unknown kind (nvidia-smi logs) by the slower of the compute and bandwidth ratios,
  so an unseen bottleneck is never assumed to be the one that got faster;
- host-bound and idle time unchanged: the host is the same whatever GPU waits on it.

Peak ratios are optimistic and pessimistic in turn: kernels rarely reach the same fraction of
peak on two generations, small kernels do not fill a big GPU, and clocks under sustained load
differ from datasheets. So every scaled part carries +/-15 % (UNCERTAINTY), giving low /
expected / high step times; the current GPU is the measurement itself, with no range.

A candidate fits when 0.99 x its memory (what the sizing engine assumes CUDA can use) holds the
measured peak plus headroom. Without a measured peak only GPUs with at least the current GPU's
memory are considered to fit. A GPU that does not fit is listed with the reason, never costed.

Prices are what a team pays for an instance it can rent: a candidate is priced on instances of
the job's GPU count (a 1-GPU job on 1-GPU instances) at the whole instance's price, never at
the per-GPU share of a bigger one, which nobody rents by the GPU. When no instance of that size
is offered, the cheapest larger one is priced whole and a note says so. The current GPU is
priced at the size of the machine it ran on (`node_gpu_count`, when the trace shows more GPUs
than the job used), and the same GPU at the job's size is listed beside it, so idle GPUs show
up as money. Cost per 1,000 steps per offer: the instance's price per hour x projected step time
x 1000 / 3600.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from advisor.domain.devices import Device, Offer
from advisor.domain.ranges import Range
from advisor.domain.rightsizing.observed import ASSUMED_PRECISION, ObservedJob

UNCERTAINTY = 0.15
_SECONDS_PER_HOUR = 3600
_STEPS = 1000
_GIB = 2**30


@dataclass(frozen=True)
class OfferCost:
    offer: Offer
    usd_per_1000_steps: Range


@dataclass(frozen=True)
class Projection:
    device: Device
    is_current: bool
    fits: bool
    reason: str  # why it does not fit; empty when it does
    step_s: Range | None  # None when it does not fit or a figure is missing
    offers: list[OfferCost] = field(default_factory=list)  # cheapest first
    notes: list[str] = field(default_factory=list)
    gpu_count: int = 1  # GPUs per instance the job is priced on

    @property
    def best_offer(self) -> OfferCost | None:
        return self.offers[0] if self.offers else None


def project(
    job: ObservedJob,
    current: Device,
    candidates: Sequence[Device],
    offers_by_device: Mapping[str, Sequence[Offer]],
    *,
    headroom_fraction: float = 0.10,
    node_gpu_count: int | None = None,
) -> list[Projection]:
    """The current GPU and every candidate, ranked: GPUs that fit by their cheapest expected
    cost per 1,000 steps (those without an offer after), then those that do not fit.
    node_gpu_count: the GPUs of the machine the job ran on, when more than it used."""
    node_gpus = max(node_gpu_count or job.gpu_count, job.gpu_count)
    entries = [(current, True, node_gpus)]
    if node_gpus > job.gpu_count:
        entries.append((current, False, job.gpu_count))
    entries += [
        (device, False, job.gpu_count) for device in candidates if device.key != current.key
    ]
    projections = []
    for device, is_current, gpu_count in entries:
        same_gpu = device.key == current.key
        reason = "" if same_gpu else _does_not_fit(job, device, current, headroom_fraction)
        if reason:
            projections.append(Projection(device, False, False, reason, None, gpu_count=gpu_count))
            continue
        step_s, notes = _step_s(job, current, device, same_gpu)
        offers, how = _instances(device, offers_by_device.get(device.key, ()), gpu_count)
        costs = _costs(step_s, offers) if step_s else []
        # A projection resting on figures the catalogue could not source says so.
        doubt = [device.low_confidence_warning] if device.low_confidence_warning else []
        projections.append(
            Projection(
                device,
                is_current,
                True,
                "",
                step_s,
                costs,
                [*notes, *how, *doubt],
                gpu_count=gpu_count,
            )
        )
    return sorted(projections, key=_rank_key)


def _rank_key(projection: Projection) -> tuple[int, float]:
    best = projection.best_offer
    if not projection.fits or projection.step_s is None:
        return (2, 0.0)
    return (0, best.usd_per_1000_steps.expected) if best else (1, 0.0)


def _does_not_fit(
    job: ObservedJob, device: Device, current: Device, headroom_fraction: float
) -> str:
    if job.peak_memory_bytes is None:
        if device.memory_gib < current.memory_gib:
            return (
                f"peak memory was not measured, and {device.name} has less memory "
                f"({device.memory_gib:g} GiB) than the {current.name} it ran on"
            )
        return ""
    needed_bytes = job.peak_memory_bytes * (1 + headroom_fraction)
    if needed_bytes > device.usable_memory_bytes:
        return (
            f"needs {needed_bytes / _GIB:.1f} GiB (peak {job.peak_memory_bytes / _GIB:.1f} GiB + "
            f"{100 * headroom_fraction:.0f} % headroom); {device.name} offers "
            f"{device.usable_memory_bytes / _GIB:.1f} GiB usable"
        )
    return ""


def _step_s(
    job: ObservedJob, current: Device, device: Device, same_gpu: bool
) -> tuple[Range | None, list[str]]:
    unchanged_s = job.host_idle_s
    if same_gpu:  # the measurement itself, whatever size of instance it is priced on
        return Range(job.step_s, job.step_s, job.step_s), []
    notes = []
    precision = job.precision
    if job.workload == "non-ml":
        precision = _non_ml_peak(job, notes)
    elif precision == "unknown":
        precision = ASSUMED_PRECISION
        notes.append(f"kernel names do not reveal the precision: assumes {precision}")
    here, _ = current.dense_tflops(precision)
    there, how = device.dense_tflops(precision)
    if how:
        notes.append(how)
    if not here or not there:
        missing = current.name if not here else device.name
        return None, [*notes, f"the catalogue has no {precision} TFLOPS for {missing}"]
    memory_ratio = current.bandwidth_gb_s / device.bandwidth_gb_s
    compute_ratio = here / there
    if job.workload == "non-ml":
        compute_ratio = max(compute_ratio, memory_ratio)
    link_ratio = current.link_gb_s(job.gpu_count) / device.link_gb_s(job.gpu_count)
    scaled_s = (
        job.compute_s * compute_ratio
        + job.memory_s * memory_ratio
        + job.communication_s * link_ratio
        + job.unattributed_s * max(compute_ratio, memory_ratio)
    )
    return (
        Range(
            unchanged_s + scaled_s * (1 - UNCERTAINTY),
            unchanged_s + scaled_s,
            unchanged_s + scaled_s * (1 + UNCERTAINTY),
        ),
        notes,
    )


def _non_ml_peak(job: ObservedJob, notes: list[str]) -> str:
    """The peak a non-ML job's computation kernels are scaled by (with the bandwidth ratio)."""
    peak = job.precision if job.precision != "unknown" else "fp64" if job.fp64 else "fp32"
    if job.precision == "unknown":
        why = "their names say double precision" if job.fp64 else "FP32 unless names say FP64"
        notes.append(
            "precision unknown: kernel names do not reveal it, and no GEMM, convolution or "
            "attention kernel ran (not an ML workload), so bf16 is not assumed; computation "
            f"kernels scale by the slower of memory bandwidth and the {peak.upper()} peak ({why})"
        )
    else:
        notes.append(
            f"{peak.upper()} matrix math (not an ML workload): computation kernels scale by the "
            f"slower of memory bandwidth and the {peak.upper()} peak"
        )
    if peak == "fp64":
        notes.append(
            "FP64 peaks are the catalogue's vector FP64 figures; GEMMs on FP64 tensor cores "
            "can run faster"
        )
    return peak


def _instances(
    device: Device, offers: Sequence[Offer], gpu_count: int
) -> tuple[list[Offer], list[str]]:
    """The offers a job of `gpu_count` GPUs can rent: instances of exactly that size, or else
    the cheapest larger one, with a note saying so."""
    exact = [offer for offer in offers if offer.gpu_count == gpu_count]
    if exact or not offers:
        return exact, []
    larger = [offer for offer in offers if offer.gpu_count > gpu_count]
    if not larger:
        return [], [f"no instance with {gpu_count} {device.name} GPUs or more is offered"]
    cheapest = min(larger, key=lambda offer: offer.usd_per_hour)
    return [cheapest], [
        f"no {gpu_count}-GPU {device.name} instance is offered: priced on {cheapest.provider} "
        f"{cheapest.instance_type} whole, ${cheapest.usd_per_hour:.2f}/h"
    ]


def _costs(step_s: Range, offers: Sequence[Offer]) -> list[OfferCost]:
    """Cost per 1,000 steps on each instance, at the whole instance's hourly price."""
    costs = [
        OfferCost(offer, step_s.scaled(offer.usd_per_hour * _STEPS / _SECONDS_PER_HOUR))
        for offer in offers
    ]
    return sorted(costs, key=lambda cost: cost.usd_per_1000_steps.expected)
