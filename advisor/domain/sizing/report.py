"""One JSON shape for a sizing answer: the API returns it, the CLI prints it, pages render it."""

from typing import Any

from advisor.domain.ranges import Range
from advisor.domain.sizing.architecture.model import StoredWeights
from advisor.domain.sizing.memory import GIB
from advisor.domain.sizing.phases import allocated_peak
from advisor.domain.sizing.precision import BYTES_PER_VALUE
from advisor.domain.sizing.recommend import Candidate, SizingResult
from advisor.domain.sizing.slices import mig_slice_report
from advisor.domain.sizing.workload import Workload


def _range(value: Range | None, digits: int = 4) -> dict[str, float] | None:
    return value.as_dict(digits) if value else None


def _stored_weights(stored: StoredWeights | None) -> dict[str, Any] | None:
    """A quantised checkpoint's weights as its files hold them, part by part."""
    if stored is None:
        return None
    return {
        "method": stored.method,
        "summary": stored.summary,
        "weight_bytes": round(stored.weight_bytes),
        "checkpoint_bytes": round(stored.checkpoint_bytes),
        "parts": [
            {
                "what": part.what,
                "params": part.params,
                "bits_per_param": round(part.bits_per_param, 4),
                "bytes": round(part.bytes),
            }
            for part in stored.parts
        ],
    }


def candidate_report(candidate: Candidate, *, encoder_only: bool = False) -> dict[str, Any]:
    offer = candidate.offer
    report: dict[str, Any] = {
        "gpu": candidate.device.key,
        "gpu_name": candidate.device.name,
        "gpu_count": candidate.gpu_count,
        "fits": candidate.fits,
        "reason": candidate.reason,
        "parallelism": candidate.parallelism.describe(),
        "tensor_parallel": candidate.parallelism.tensor_parallel,
        "zero_stage": candidate.parallelism.zero_stage,
        "memory_per_gpu_bytes": round(candidate.memory.total),
        "memory_per_gpu_gib": round(candidate.memory.total / GIB, 2),
        "usable_per_gpu_gib": round(candidate.usable_bytes / GIB, 2),
        "memory": candidate.memory.as_dict(),
        "warnings": candidate.warnings,
        "usd_per_hour": offer.usd_per_hour if offer else None,
        "mig_slice": mig_slice_report(candidate.mig_slice, candidate.device),
        "offer": {
            "provider": offer.provider,
            "provider_name": offer.provider_name,
            "instance_type": offer.instance_type,
            "region": offer.region,
            "pricing_model": offer.pricing_model,
        }
        if offer
        else None,
    }
    if candidate.speed:
        speed = candidate.speed
        report |= {
            "decode_tokens_per_s_per_sequence": _range(speed.decode_tokens_per_s_per_sequence, 2),
            "decode_tokens_per_s_total": _range(speed.decode_tokens_per_s_total, 2),
            "prefill_seconds": _range(speed.prefill_seconds),
            "time_to_first_token_seconds": _range(speed.time_to_first_token_seconds),
            "seconds_per_request": _range(speed.seconds_per_request),
            "bound": speed.bound,
            "usd_per_million_tokens": _range(candidate.usd_per_million_tokens),
            "usd_per_million_tokens_counts": (
                "input tokens encoded"
                if encoder_only
                else "generated tokens, each request's prefill included"
            ),
            "max_concurrent_users": candidate.max_concurrent_users,
            "kv_capacity_tokens": candidate.kv_capacity_tokens,
            "max_concurrency": (
                round(candidate.max_concurrency, 2)
                if candidate.max_concurrency is not None
                else None
            ),
        }
    if candidate.training:
        report |= {
            "training_hours": _range(candidate.training.hours),
            "training_flops": candidate.training.flops,
            "training_flops_rule": candidate.training.flops_rule,
            "hardware_flops": candidate.training.hardware_flops,
            "recompute": candidate.training.recompute_rule,
            "mfu": _range(candidate.training.mfu),
            "utilization_band": _range(candidate.training.utilization),
            "usd_per_job": _range(candidate.usd_per_job, 2),
        }
    return report


def stack_report(workload: Workload) -> dict[str, Any]:
    """The stack and the settings of it this answer used: its published defaults, with the
    memory fraction (serving) or the checkpointing granularity (training) as applied."""
    report = workload.stack.defaults()
    if workload.stack.serving:
        report["gpu_memory_utilization"] = workload.gpu_memory_utilization
    else:
        report["checkpointing"] = str(workload.checkpointing)
        report["optimizer_offload"] = workload.optimizer_offload or workload.parameter_offload
        report["parameter_offload"] = workload.parameter_offload
        report["activation_offloading"] = workload.offloads_activations
        report["optimizer_in_backward"] = workload.steps_in_backward
    return report


def sizing_report(result: SizingResult) -> dict[str, Any]:
    workload = result.workload
    arch = workload.architecture
    best = result.best
    reference = best or min(result.candidates, key=lambda c: c.memory.total)
    kv_bytes = BYTES_PER_VALUE[workload.kv_dtype]
    encoder_only = arch.encoder_only
    return {
        "model": {
            "name": arch.name,
            "family": arch.family,
            "params_total": arch.params_total,
            "params_active": arch.params_active,
            "kv_bytes_per_token": round(arch.kv_bytes_per_token(kv_bytes)),
            "kv_dtype": str(workload.kv_dtype),
            "num_layers": arch.num_layers,
            "hidden_size": arch.hidden_size,
            "sliding_window": arch.sliding_window,
            "stored_weights": _stored_weights(arch.stored_weights),
        },
        "workload": {
            "task": str(workload.task),
            "weight_dtype": str(workload.weight_dtype),
            "weights_as_stored": workload.stored_weights is not None,
            "kv_dtype": str(workload.kv_dtype),
            "batch_size": workload.batch_size,
            "context_tokens": workload.context_tokens,
            "output_tokens": workload.output_tokens,
            "optimizer": str(workload.optimizer),
            "gradient_checkpointing": workload.gradient_checkpointing,
            "flash_attention": workload.flash_attention,
            "zero_stage": workload.zero_stage,
            "tensor_parallel": workload.tensor_parallel,
            "lora_rank": workload.lora_rank,
            "lora_targets": list(workload.lora_targets),
            "train_tokens": workload.tokens_to_train if workload.task.trains else None,
            "stack": workload.stack_name,
            "gpu_memory_utilization": workload.gpu_memory_utilization,
            "activation_checkpointing": str(workload.checkpointing)
            if workload.task.trains
            else None,
            "optimizer_offload": workload.optimizer_offload,
            "parameter_offload": workload.parameter_offload,
            "activation_offloading": workload.activation_offloading,
            "optimizer_in_backward": workload.optimizer_in_backward,
            "pricing_model": workload.pricing_model,
            "goal": str(workload.goal),
        },
        "stack": stack_report(workload),
        "memory": reference.memory.as_dict(),
        "memory_for": {"gpu": reference.device.key, "gpu_count": reference.gpu_count},
        # What torch.cuda.max_memory_allocated will read for the same step: the largest phase,
        # below the reserved memory (the lines' sum) that has to fit.
        "memory_allocated_peak_bytes": (
            round(allocated_peak(workload, reference.parallelism, reference.memory).expected)
            if workload.task.trains
            else None
        ),
        "fits_anywhere": best is not None,
        "recommendation": candidate_report(best, encoder_only=encoder_only) if best else None,
        "candidates": [candidate_report(c, encoder_only=encoder_only) for c in result.candidates],
        "remedies": [
            {
                "name": remedy.name,
                "change": remedy.change,
                "fits": remedy.fits,
                "effect": remedy.effect,
                "best": (
                    candidate_report(remedy.best, encoder_only=encoder_only)
                    if remedy.best
                    else None
                ),
            }
            for remedy in result.remedies
        ],
        "assumptions": result.assumptions,
    }
