"""When nothing fits: the changes a team would try (a smaller KV cache, quantised weights, ZeRO-3,
LoRA, shorter sequences...), each sized on the catalogue with its effect, cheapest fitting first,
and how many GPUs the memory alone calls for beyond one node."""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from advisor.domain.devices import Device, Offer
from advisor.domain.sizing.candidates import Candidate, Rejection, rank_candidates
from advisor.domain.sizing.memory_breakdown import format_gib
from advisor.domain.sizing.precision import Dtype
from advisor.domain.sizing.workload import Optimizer, Task, Workload


@dataclass(frozen=True)
class Remedy:
    name: str
    change: str
    fits: bool
    effect: str
    best: Candidate | None


def _remedy_variants(workload: Workload) -> list[tuple[str, str, Workload]]:
    arch = workload.architecture
    variants: list[tuple[str, str, Workload]] = []
    if workload.task is Task.INFERENCE:
        if arch.has_kv_cache and workload.kv_dtype not in {Dtype.FP8}:
            variants.append(
                (
                    "fp8 KV cache",
                    "store the KV cache in fp8 (halves it)",
                    workload.with_changes(kv_dtype=Dtype.FP8),
                )
            )
        # A quantised checkpoint served as stored is not re-quantised by a remedy.
        requantise = workload.stored_weights is None
        if requantise and workload.weight_dtype in {Dtype.FP32, Dtype.BF16, Dtype.FP16}:
            variants.append(
                (
                    "fp8 weights",
                    "serve fp8-quantised weights",
                    workload.with_changes(weight_dtype=Dtype.FP8),
                )
            )
        if requantise and workload.weight_dtype is not Dtype.INT4:
            variants.append(
                (
                    "int4 weights",
                    "serve 4-bit (GPTQ/AWQ) weights",
                    workload.with_changes(weight_dtype=Dtype.INT4),
                )
            )
        if workload.context_tokens > 1024:
            shorter = workload.context_tokens // 2
            variants.append(
                (
                    "shorter context",
                    f"cap the context at {shorter:,} tokens",
                    workload.with_changes(context_tokens=shorter),
                )
            )
        if workload.batch_size > 1:
            fewer = max(1, workload.batch_size // 2)
            variants.append(
                (
                    "fewer concurrent sequences",
                    f"serve {fewer} sequences at once",
                    workload.with_changes(batch_size=fewer),
                )
            )
        return variants
    if not workload.gradient_checkpointing:
        variants.append(
            (
                "gradient checkpointing",
                "recompute activations in the backward pass",
                workload.with_changes(gradient_checkpointing=True),
            )
        )
    if workload.zero_stage not in {None, 3}:
        variants.append(
            (
                "ZeRO-3 / FSDP",
                "shard weights, gradients and optimizer states",
                workload.with_changes(zero_stage=3),
            )
        )
    if workload.task in {Task.FULL, Task.PRETRAIN} and workload.optimizer is Optimizer.ADAMW:
        variants.append(
            (
                "8-bit Adam",
                "keep Adam's moments in 8 bits",
                workload.with_changes(optimizer=Optimizer.ADAMW_8BIT),
            )
        )
    if workload.task is Task.FULL:
        variants.append(
            (
                "LoRA",
                "train low-rank adapters on a frozen 16-bit model",
                workload.with_changes(task=Task.LORA),
            )
        )
    if workload.task in {Task.FULL, Task.LORA}:
        variants.append(
            (
                "QLoRA",
                "train adapters on a frozen 4-bit (NF4) model",
                workload.with_changes(task=Task.QLORA),
            )
        )
    if workload.batch_size > 1:
        variants.append(
            (
                "micro-batch 1",
                "micro-batch of 1 with gradient accumulation",
                workload.with_changes(batch_size=1),
            )
        )
    if workload.context_tokens > 1024:
        shorter = workload.context_tokens // 2
        variants.append(
            (
                "shorter sequences",
                f"train on {shorter:,}-token sequences",
                workload.with_changes(context_tokens=shorter),
            )
        )
    return variants


def remedies_for(
    workload: Workload, devices: Sequence[Device], offers_by_device: Mapping[str, Sequence[Offer]]
) -> list[Remedy]:
    remedies = []
    for name, change, variant in _remedy_variants(workload):
        ranked = rank_candidates(variant, devices, offers_by_device)
        best = ranked[0] if ranked and ranked[0].fits else None
        if best:
            price = f", from ${best.offer.usd_per_hour:,.2f}/h" if best.offer else ""
            effect = (
                f"fits on {best.gpu_count}× {best.device.name}: {format_gib(best.memory.total)} of "
                f"{format_gib(best.usable_bytes)} per GPU{price}"
            )
        else:
            smallest = min(ranked, key=lambda c: c.memory.total / c.usable_bytes)
            effect = f"still does not fit: {smallest.reason}"
        remedies.append(Remedy(name, change, best is not None, effect, best))
    remedies.sort(
        key=lambda r: (
            not r.fits,
            r.best.offer is None if r.best else True,
            (r.best.usd_per_hour or 0) if r.best else 0,
        )
    )
    remedies.append(_more_gpus(workload, devices, offers_by_device))
    return remedies


def _more_gpus(
    workload: Workload, devices: Sequence[Device], offers_by_device: Mapping[str, Sequence[Offer]]
) -> Remedy:
    """Beyond one node: how many GPUs the memory alone calls for, as a first bound."""
    eight = [
        c
        for c in rank_candidates(workload, devices, offers_by_device, counts=(8,))
        if c.fits or c.rejection == Rejection.DOES_NOT_FIT  # not ruled out by precision or heads
    ]
    if not eight:
        effect = "no GPU in the catalogue can run this layout at 8 GPUs (precision or heads)"
        return Remedy("more GPUs", "shard over more than 8 GPUs", False, effect, None)
    closest = min(eight, key=lambda c: c.memory.total / c.usable_bytes)
    gpus = math.ceil(8 * closest.memory.total / closest.usable_bytes)
    effect = (
        f"at least {gpus}× {closest.device.name} by memory alone (several nodes; "
        "inter-node bandwidth not sized here)"
    )
    return Remedy("more GPUs", "shard over more than 8 GPUs", False, effect, None)
