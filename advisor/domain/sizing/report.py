"""One JSON shape for a sizing answer: the API returns it, the CLI prints it, pages render it."""

from typing import Any

from advisor.domain.compatibility.moves import StackMove
from advisor.domain.devices import Offer
from advisor.domain.ranges import Range
from advisor.domain.sizing.architecture.model import StoredWeights
from advisor.domain.sizing.memory_breakdown import GIB, MEMORY_COMPONENTS, MemoryBreakdown
from advisor.domain.sizing.phases import allocated_peak
from advisor.domain.sizing.precision import BYTES_PER_VALUE
from advisor.domain.sizing.recommend import Candidate, SizingResult
from advisor.domain.sizing.serving_memory import kv_capacity_range
from advisor.domain.sizing.slices import mig_slice_report
from advisor.domain.sizing.speed.cluster import ScaleOut
from advisor.domain.sizing.speed.serving_load import max_load_concurrency, max_load_output_rate
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


def offer_report(offer: Offer | None) -> dict[str, Any] | None:
    """The offer a candidate is priced on, with its price's age and the provider's page."""
    if offer is None:
        return None
    return {
        "provider": offer.provider,
        "provider_name": offer.provider_name,
        "provider_kind": offer.provider_kind or None,
        "instance_type": offer.instance_type,
        "region": offer.region,
        "pricing_model": offer.pricing_model,
        "usd_per_hour": offer.usd_per_hour,
        "freshness": offer.freshness,
        "price_observed_at": (
            offer.price_observed_at.isoformat() if offer.price_observed_at else None
        ),
        "pricing_url": offer.pricing_url,
        "network": network_report(offer),
    }


def network_report(offer: Offer) -> dict[str, Any]:
    """The instance's inter-node fabric (catalog/data/instance_networks.csv), or what is
    assumed where it lists none."""
    network = offer.network
    return {
        "fabric": network.fabric,
        "network_gbps": network.network_gbps,
        "source_url": network.source_url,
        "retrieved": network.retrieved,
        "assumed": network.assumed,
    }


def memory_range_report(memory: MemoryBreakdown, *, serving: bool) -> dict[str, dict[str, int]]:
    """Each line of the breakdown and the total as low / expected / high bytes per GPU, from
    how far such lines are from measurements (memory_spread.MEMORY_SPREAD)."""
    lines = {
        name: _bytes_range(memory.component_range(name, serving=serving))
        for name in MEMORY_COMPONENTS
    }
    return lines | {"total": _bytes_range(memory.total_range(serving=serving))}


def _bytes_range(value: Range) -> dict[str, int]:
    return {"low": round(value.low), "expected": round(value.expected), "high": round(value.high)}


def candidate_report(
    candidate: Candidate, *, encoder_only: bool = False, serving: bool = False
) -> dict[str, Any]:
    offer = candidate.offer
    report: dict[str, Any] = {
        "gpu": candidate.device.key,
        "gpu_name": candidate.device.name,
        "gpu_count": candidate.gpu_count,
        "fits": candidate.fits,
        "rejection": candidate.rejection,
        "missing": candidate.missing,
        "reason": candidate.reason,
        "parallelism": candidate.parallelism.describe(),
        "tensor_parallel": candidate.parallelism.tensor_parallel,
        "zero_stage": candidate.parallelism.zero_stage,
        "memory_per_gpu_bytes": round(candidate.memory.total),
        "memory_per_gpu_gib": round(candidate.memory.total / GIB, 2),
        "usable_per_gpu_gib": round(candidate.usable_bytes / GIB, 2),
        "memory": candidate.memory.as_dict(),
        "memory_per_gpu_range": _bytes_range(candidate.memory.total_range(serving=serving)),
        "warnings": candidate.warnings,
        "usd_per_hour": candidate.usd_per_hour,
        "instances": candidate.instances,
        "mig_slice": mig_slice_report(candidate.mig_slice, candidate.device),
        "offer": offer_report(offer),
        "with_other_stack": _move_report(candidate.move) if candidate.move else None,
    }
    if candidate.speed:
        speed = candidate.speed
        report |= {
            "output_tokens_per_s_total": _range(speed.output_tokens_per_s_total, 2),
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
            "pipeline_parallel": candidate.parallelism.pipeline_parallel,
            "expert_parallel": candidate.parallelism.expert_parallel,
            "scale_out": _scale_out_report(candidate.training.scale_out),
        }
    return report


def _scale_out_report(scale: ScaleOut | None) -> dict[str, Any] | None:
    """Across nodes: what the cluster added to the run, and what it assumed."""
    if scale is None:
        return None
    return {
        "nodes": scale.nodes,
        "node_gpus": scale.node_gpus,
        "collective_hours": _range(scale.collective_seconds.scaled(1 / 3600)),
        "exposed_collective_hours": _range(scale.exposed_seconds.scaled(1 / 3600)),
        "moe_all_to_all_hours": round(scale.all_to_all_seconds.expected / 3600, 4),
        "pipeline_bubble_fraction": round(scale.bubble_fraction, 4),
        "scale_out_efficiency": round(scale.efficiency, 4),
        "assumptions": scale.assumptions(),
    }


def deadline_report(result: SizingResult) -> dict[str, Any] | None:
    """train_days: per GPU type and provider, the smallest cluster within it (or the fastest)."""
    days = result.workload.train_days
    if days is None:
        return None
    return {
        "train_days": days,
        "fits_anywhere": any(pick.fits for pick in result.deadline),
        "picks": [
            {
                "gpu": pick.device.key,
                "gpu_name": pick.device.name,
                "provider": pick.provider,
                "fits": pick.fits,
                "gpu_count": pick.gpu_count,
                "instances": pick.instances,
                "days": _range(pick.days, 2),
                "usd_per_job": _range(pick.usd_per_job, 2),
                "offer": offer_report(pick.offer),
                "sentence": pick.sentence(days),
            }
            for pick in result.deadline
        ],
    }


def _recommendation_report(best: Candidate, workload: Workload) -> dict[str, Any]:
    """The recommended candidate with each memory line's range, and for a serving answer what
    it serves at its most load."""
    report = candidate_report(
        best, encoder_only=workload.architecture.encoder_only, serving=not workload.task.trains
    )
    report["memory_range"] = memory_range_report(best.memory, serving=not workload.task.trains)
    if best.speed is not None and workload.architecture.has_kv_cache:
        pool = kv_capacity_range(workload, best.parallelism, best.usable_bytes)
        rate = max_load_output_rate(workload, best.device, best.parallelism, pool)
        report["max_load_output_tokens_per_s"] = _range(rate, 2)
        report["max_load_concurrency"] = max_load_concurrency(workload, pool.expected)
    return report


def _listed(
    candidates: list[Candidate], max_candidates: int, include_rejected: bool
) -> list[Candidate]:
    running = [c for c in candidates if c.fits]
    shown = running[:max_candidates] if max_candidates else running
    return shown + ([c for c in candidates if not c.fits] if include_rejected else [])


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


DEFAULT_MAX_CANDIDATES = 25


def _move_report(move: StackMove) -> dict[str, Any]:
    return {
        "stack": move.stack,
        "move": move.move,
        "why": move.why,
        "sources": [source.url for source in move.sources],
    }


def other_stacks_report(result: SizingResult) -> list[dict[str, Any]]:
    """GPU types the stack does not run on where another stack runs the work: the stack, what
    the move costs the team's code, and that stack's best candidate there."""
    rows = []
    for other in result.other_stacks:
        best = other.best
        rows.append(
            {
                "gpu": other.device.key,
                "gpu_name": other.device.name,
                **_move_report(other.move),
                "lacks": list(other.lacks),
                "best": None
                if best is None
                else {
                    "gpu_count": best.gpu_count,
                    "reason": best.reason,
                    "offer": offer_report(best.offer),
                    "usd_per_job": _range(best.usd_per_job, 2),
                    "usd_per_million_tokens": _range(best.usd_per_million_tokens),
                },
            }
        )
    return rows


def rejected_summary(candidates: list[Candidate]) -> list[dict[str, Any]]:
    """The candidates that do not run, counted by kind, with the first (closest) of each."""
    by_kind: dict[str, list[Candidate]] = {}
    for candidate in candidates:
        if not candidate.fits:
            by_kind.setdefault(candidate.rejection or "other", []).append(candidate)
    return [
        {
            "rejection": kind,
            "count": len(rejected),
            "example": {
                "gpu": rejected[0].device.key,
                "gpu_count": rejected[0].gpu_count,
                "reason": rejected[0].reason,
            },
        }
        for kind, rejected in sorted(by_kind.items(), key=lambda item: -len(item[1]))
    ]


def _equal_cost_alternative(candidate: Candidate | None) -> dict[str, Any] | None:
    """For a training lead: the layout with fewer GPUs at the same bill, and the sentence."""
    alternative = candidate.equal_cost_alternative if candidate else None
    if alternative is None or alternative.usd_per_job is None or alternative.training is None:
        return None
    hours = alternative.training.hours.expected
    usd = alternative.usd_per_job.expected
    return {
        "gpu": alternative.device.key,
        "gpu_count": alternative.gpu_count,
        "training_hours": round(hours, 2),
        "usd_per_job": round(usd, 2),
        "offer": offer_report(alternative.offer),
        "sentence": (
            f"or {alternative.gpu_count}x {alternative.device.name} in {hours:,.0f} h "
            f"for the same ${usd:,.0f}"
        ),
    }


def sizing_report(
    result: SizingResult,
    *,
    max_candidates: int = DEFAULT_MAX_CANDIDATES,
    include_rejected: bool = False,
) -> dict[str, Any]:
    """The answer. `candidates` lists the first `max_candidates` that run, in rank order (0:
    all), and, with `include_rejected`, every one that does not after them; the rejected are
    always counted by kind in `rejected_summary`."""
    workload = result.workload
    arch = workload.architecture
    best = result.best
    reference = best or min(result.candidates, key=lambda c: c.memory.total)
    kv_bytes = BYTES_PER_VALUE[workload.kv_dtype]
    encoder_only = arch.encoder_only
    serving = not workload.task.trains
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
            "providers": list(workload.rental.providers),
            "exclude_providers": list(workload.rental.exclude_providers),
            "regions": list(workload.rental.regions),
            "exclude_marketplaces": workload.rental.exclude_marketplaces,
            "max_gpus": workload.rental.max_gpus,
            "gpu_count": workload.gpu_count,
            "train_days": workload.train_days,
            "other_stacks": workload.other_stacks,
        },
        "stack": stack_report(workload),
        "memory": reference.memory.as_dict(),
        "memory_range": memory_range_report(reference.memory, serving=serving),
        "memory_for": {"gpu": reference.device.key, "gpu_count": reference.gpu_count},
        # What torch.cuda.max_memory_allocated will read for the same step: the largest phase,
        # below the reserved memory (the lines' sum) that has to fit.
        "memory_allocated_peak_bytes": (
            round(allocated_peak(workload, reference.parallelism, reference.memory).expected)
            if workload.task.trains
            else None
        ),
        "fits_anywhere": best is not None,
        "recommendation": _recommendation_report(best, workload) if best else None,
        "equal_cost_alternative": _equal_cost_alternative(best),
        "candidates": [
            candidate_report(c, encoder_only=encoder_only, serving=serving)
            for c in _listed(result.candidates, max_candidates, include_rejected)
        ],
        "candidates_running": sum(1 for c in result.candidates if c.fits),
        "rejected_summary": rejected_summary(result.candidates),
        "with_other_stacks": other_stacks_report(result),
        "remedies": [
            {
                "name": remedy.name,
                "change": remedy.change,
                "fits": remedy.fits,
                "effect": remedy.effect,
                "best": (
                    candidate_report(remedy.best, encoder_only=encoder_only, serving=serving)
                    if remedy.best
                    else None
                ),
            }
            for remedy in result.remedies
        ],
        "deadline": deadline_report(result),
        "assumptions": result.assumptions,
    }
