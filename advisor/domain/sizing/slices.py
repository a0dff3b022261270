"""MIG slices for serving: when one copy of a served model fits a slice of a GPU, how many copies
one GPU serves, what each copy costs, and how fast each runs.

A slice gets its profile's share of the SMs (compute) and of the memory slices, which carry the
memory bandwidth with them (NVIDIA MIG User Guide, "Concepts": each memory slice is about one
eighth of the memory resources, capacity and bandwidth). Speed is therefore the full-GPU model
run on a device scaled to the slice. Never offered for training, for a job on more than one
GPU, or on a GPU without MIG profiles.
"""

from dataclasses import dataclass, replace

from advisor.domain.devices import Device, MigProfile, Offer
from advisor.domain.ranges import Range
from advisor.domain.sizing.layout import Parallelism
from advisor.domain.sizing.memory_breakdown import GIB, MemoryBreakdown, usable_bytes
from advisor.domain.sizing.serving_memory import kv_capacity_tokens, serving_usable_bytes
from advisor.domain.sizing.speed import inference_speed
from advisor.domain.sizing.workload import Workload


@dataclass(frozen=True)
class MigSlice:
    profile: MigProfile
    copies_per_gpu: int
    memory_per_copy_bytes: float
    usable_bytes: float
    usd_per_hour_per_copy: float | None
    tokens_per_second: Range
    tokens_counted: str
    max_concurrent_users: int | None

    def summary(self, device: Device) -> str:
        return (
            f"fits a {self.profile.name} slice: one {device.name} serves "
            f"{self.copies_per_gpu} copies"
        )


def slice_device(device: Device, profile: MigProfile) -> Device:
    """The GPU as one slice sees it: its memory, its share of the bandwidth and of every peak."""

    def share(value: float | None) -> float | None:
        return None if value is None else value * profile.compute_fraction

    return replace(
        device,
        name=f"{device.name} {profile.name}",
        memory_gib=profile.memory_gib,
        bandwidth_gb_s=device.bandwidth_gb_s * profile.memory_fraction,
        fp64_tflops=share(device.fp64_tflops),
        fp32_tflops=share(device.fp32_tflops),
        tf32_tflops=share(device.tf32_tflops),
        bf16_tflops=share(device.bf16_tflops),
        fp16_tflops=share(device.fp16_tflops),
        fp8_tflops=share(device.fp8_tflops),
        int8_tops=share(device.int8_tops),
        mig_profiles=(),
    )


def _shared_profiles(device: Device) -> list[MigProfile]:
    """Profiles that split a GPU between copies. One a GPU holds only once (7g, 4g, the media
    engine variants) gives one copy per GPU, which costs what the whole GPU costs."""
    return [profile for profile in device.mig_profiles if profile.max_count > 1]


def _usable_bytes(workload: Workload, memory: MemoryBreakdown, profile: MigProfile) -> float:
    """What the workload may use of one slice, by the rule the whole GPU is judged by: a
    serving stack's memory fraction of what CUDA sees, else the usable share."""
    cuda_bytes = usable_bytes(profile.memory_gib)
    if workload.stack.serving:
        return serving_usable_bytes(workload, memory, cuda_bytes)
    return cuda_bytes


def best_slice(
    workload: Workload,
    device: Device,
    parallelism: Parallelism,
    memory: MemoryBreakdown,
    offer: Offer | None,
) -> MigSlice | None:
    """The profile that serves the most copies of this workload on one GPU (more compute, then
    more memory, break ties), or None when no slice applies."""
    if workload.task.trains or parallelism.gpu_count != 1:
        return None
    fitting = [
        p for p in _shared_profiles(device) if memory.total <= _usable_bytes(workload, memory, p)
    ]
    if not fitting:
        return None
    profile = max(fitting, key=lambda p: (p.max_count, p.compute_fraction, p.memory_gib))
    usable = _usable_bytes(workload, memory, profile)
    speed = inference_speed(workload, slice_device(device, profile), parallelism)
    if workload.architecture.encoder_only:
        # An encoder reads its input once: its rate is input tokens encoded per second.
        tokens = workload.context_tokens * workload.batch_size
        rate, counted = speed.prefill_seconds.inverted(tokens), "input tokens encoded"
    elif speed.output_tokens_per_s_total is not None:
        rate = speed.output_tokens_per_s_total
        counted = "generated tokens, all sequences, each request's prefill included"
    else:
        rate, counted = speed.decode_tokens_per_s_total, "generated tokens, all sequences"
    per_copy = offer.usd_per_gpu_hour / profile.max_count if offer else None
    return MigSlice(
        profile=profile,
        copies_per_gpu=profile.max_count,
        memory_per_copy_bytes=memory.total,
        usable_bytes=usable,
        usd_per_hour_per_copy=per_copy,
        tokens_per_second=rate,
        tokens_counted=counted,
        max_concurrent_users=(
            kv_capacity_tokens(workload, parallelism, usable) // workload.context_tokens
            if workload.architecture.has_kv_cache
            else None
        ),
    )


def mig_slice_report(mig_slice: MigSlice | None, device: Device) -> dict | None:
    """The `mig_slice` field of a candidate in the sizing answer's JSON."""
    if mig_slice is None:
        return None
    profile = mig_slice.profile
    return {
        "profile": profile.name,
        "summary": mig_slice.summary(device),
        "memory_gib": profile.memory_gib,
        "usable_gib": round(mig_slice.usable_bytes / GIB, 2),
        "memory_per_copy_gib": round(mig_slice.memory_per_copy_bytes / GIB, 2),
        "compute_fraction": round(profile.compute_fraction, 4),
        "memory_fraction": round(profile.memory_fraction, 4),
        "copies_per_gpu": mig_slice.copies_per_gpu,
        "usd_per_hour_per_copy": (
            round(mig_slice.usd_per_hour_per_copy, 6)
            if mig_slice.usd_per_hour_per_copy is not None
            else None
        ),
        "tokens_per_second": mig_slice.tokens_per_second.as_dict(2),
        "tokens_counted": mig_slice.tokens_counted,
        "max_concurrent_users": mig_slice.max_concurrent_users,
    }
