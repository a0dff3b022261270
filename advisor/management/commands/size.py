import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from advisor.api.serializers import SizingRequestSerializer
from advisor.domain.planning.ownership import OwnershipInputs
from advisor.domain.sizing.report import sizing_report
from advisor.management.command_errors import serializer_errors_text
from advisor.management.model_source import (
    add_model_source_arguments,
    add_ownership_argument,
    model_source_data,
)
from advisor.ownership import sizing_rent_vs_buy
from advisor.services import sizing_advise

OPTIONS = [
    "task",
    "weight_dtype",
    "kv_dtype",
    "batch_size",
    "context_tokens",
    "output_tokens",
    "concurrent_users",
    "optimizer",
    "zero_stage",
    "tensor_parallel",
    "lora_rank",
    "train_tokens",
    "pricing_model",
    "goal",
    "stack",
    "gpu_memory_utilization",
    "activation_checkpointing",
    "num_layers",
    "hidden_size",
    "num_kv_heads",
    "max_gpus",
    "max_candidates",
    "gpu_count",
    "train_days",
]
# Comma-separated on the command line, lists in the request.
LIST_OPTIONS = ["lora_targets", "providers", "exclude_providers", "regions"]


class Command(BaseCommand):
    help = (
        "Size a workload: which GPUs it fits, how fast, what it costs, ranked. "
        "The same engine and JSON as POST /api/v1/advice/sizing."
    )

    def add_arguments(self, parser: Any) -> None:
        add_model_source_arguments(parser)
        parser.add_argument(
            "--task",
            choices=["inference", "lora", "qlora", "full", "pretrain"],
            default="inference",
        )
        parser.add_argument("--weight-dtype", dest="weight_dtype")
        parser.add_argument("--kv-dtype", dest="kv_dtype")
        for name in [
            "batch_size",
            "context_tokens",
            "output_tokens",
            "concurrent_users",
            "zero_stage",
            "tensor_parallel",
            "lora_rank",
            "num_layers",
            "hidden_size",
            "num_kv_heads",
            "max_gpus",
            "max_candidates",
        ]:
            parser.add_argument(f"--{name.replace('_', '-')}", dest=name, type=int)
        parser.add_argument("--train-tokens", dest="train_tokens", type=float)
        parser.add_argument(
            "--gpu-count",
            dest="gpu_count",
            type=int,
            help="Also size this many GPUs (training across nodes: a multiple of the instance's).",
        )
        parser.add_argument(
            "--train-days",
            dest="train_days",
            type=float,
            help="Training: a deadline in days; the answer names the smallest cluster per GPU "
            "type and provider that finishes within it.",
        )
        parser.add_argument("--optimizer")
        parser.add_argument(
            "--stack",
            help=(
                "The serving or training stack: vllm (default), sglang, tensorrt_llm; hf_peft "
                "(default), torchtune, unsloth; fsdp2 (default), deepspeed_zero, megatron."
            ),
        )
        parser.add_argument(
            "--gpu-memory-utilization",
            dest="gpu_memory_utilization",
            type=float,
            help="Serving: the stack's memory fraction (default 0.90).",
        )
        parser.add_argument(
            "--activation-checkpointing",
            dest="activation_checkpointing",
            choices=["none", "selective", "full"],
            help="Training: checkpointing granularity (default: the stack's).",
        )
        parser.add_argument("--optimizer-offload", action="store_true")
        parser.add_argument("--parameter-offload", action="store_true")
        for flag, what in (
            ("--activation-offloading", "activations kept for the backward pass on the CPU"),
            ("--optimizer-in-backward", "the optimizer steps in the backward pass"),
        ):
            parser.add_argument(
                flag, choices=["on", "off"], help=f"Training: {what} (default: the stack's)."
            )
        parser.add_argument(
            "--pricing-model", dest="pricing_model", help="on_demand (default), spot or any"
        )
        parser.add_argument("--goal")
        for name, what in (
            ("lora_targets", "LoRA module groups"),
            ("providers", "only these providers' offers (keys: aws, gcp, lambda...)"),
            ("exclude_providers", "no offers of these providers"),
            ("regions", "only regions starting with these prefixes (us-, europe-...)"),
        ):
            parser.add_argument(
                f"--{name.replace('_', '-')}", dest=name, help=f"{what}, comma-separated"
            )
        parser.add_argument(
            "--exclude-marketplaces",
            action="store_true",
            help="no offers of marketplaces, where hosts set the prices",
        )
        parser.add_argument(
            "--include-rejected", action="store_true", help="list what does not run too (--json)"
        )
        parser.add_argument("--no-gradient-checkpointing", action="store_true")
        parser.add_argument("--no-flash-attention", action="store_true")
        parser.add_argument("--top", type=int, default=10, help="Candidates to print.")
        add_ownership_argument(parser)
        parser.add_argument("--json", action="store_true", help="Print the full JSON answer.")

    def handle(self, *args: Any, **options: Any) -> None:
        data: dict[str, Any] = {
            name: options[name] for name in OPTIONS if options.get(name) is not None
        }
        data |= model_source_data(options)
        if options.get("train_tokens") is not None:
            data["train_tokens"] = int(options["train_tokens"])
        for name in LIST_OPTIONS:
            if options[name]:
                data[name] = [item.strip() for item in options[name].split(",") if item.strip()]
        data["exclude_marketplaces"] = options["exclude_marketplaces"]
        data["include_rejected"] = options["include_rejected"]
        if options["ownership"] is not None:
            data["ownership"] = options["ownership"]
        data["gradient_checkpointing"] = not options["no_gradient_checkpointing"]
        data["flash_attention"] = not options["no_flash_attention"]
        data["optimizer_offload"] = options["optimizer_offload"]
        data["parameter_offload"] = options["parameter_offload"]
        for name in ("activation_offloading", "optimizer_in_backward"):
            if options[name]:
                data[name] = options[name] == "on"
        serializer = SizingRequestSerializer(data=data)
        if not serializer.is_valid():
            raise CommandError(serializer_errors_text(serializer.errors))
        validated = serializer.validated_data
        report = sizing_report(
            sizing_advise(workload=validated["workload"]),
            max_candidates=validated["max_candidates"],
            include_rejected=validated["include_rejected"],
        )
        report["model"]["source"] = validated["model_source"]
        sizing_rent_vs_buy(
            report,
            workload=validated["workload"],
            inputs=validated.get("ownership") or OwnershipInputs(),
        )
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        self._print_table(report, options["top"])

    def _print_table(self, report: dict, top: int) -> None:
        model = report["model"]
        self.stdout.write(
            f"{model['name']}: {model['params_total']:,} parameters "
            f"({model['params_active']:,} active), KV {model['kv_bytes_per_token']:,} B/token"
        )
        source = model["source"]
        if source["kind"] == "hub":
            self.stdout.write(
                f"  from the Hub: {source['hf_id']}@{source['revision']}, commit {source['commit']}"
            )
            weights = source.get("weights")
            if weights:
                computed = (
                    f"{weights['computed_bytes']:,}" if weights["computed_bytes"] else "unknown"
                )
                line = f"  stored weights {weights['stored_bytes']:,} B, computed {computed} B"
                self.stdout.write(
                    self.style.WARNING(line + " (differ by more than 1%)")
                    if weights["differs"]
                    else line
                )
        stack = report["stack"]
        self.stdout.write(
            f"  stack {stack['label']}: "
            + ", ".join(
                f"{k} {v}" for k, v in stack.items() if k not in {"name", "label", "sources"}
            )
        )
        fitting = [c for c in report["candidates"] if c["fits"]]
        if not fitting:
            self.stdout.write(self.style.WARNING("Nothing fits. Remedies:"))
            for remedy in report["remedies"]:
                self.stdout.write(f"  {remedy['name']}: {remedy['effect']}")
            return
        if report["deadline"]:
            # A deadline is the question: its answer comes first.
            self.stdout.write(f"Within {report['deadline']['train_days']:g} days:")
            for pick in report["deadline"]["picks"][:top]:
                self.stdout.write(f"  {pick['sentence']}")
            self.stdout.write("Every configuration that fits, best first:")
        for candidate in fitting[:top]:
            offer = candidate["offer"]
            price = f"${candidate['usd_per_hour']:,.2f}/h" if offer else "no offer"
            hours = (candidate.get("training_hours") or {}).get("expected")
            if hours is not None:
                price += f" {hours / 24:,.1f} days"
            where = f"  {offer['provider']} {offer['freshness']}" if offer else ""
            if candidate["instances"] > 1:
                where += f", {candidate['instances']}x {offer['instance_type']}"
            self.stdout.write(
                f"  {candidate['gpu_count']}x {candidate['gpu_name']:<28} "
                f"{candidate['memory_per_gpu_gib']:>7.1f} / "
                f"{candidate['usable_per_gpu_gib']:.1f} GiB  "
                f"{price:>12}  {candidate['parallelism']}{where}"
            )
        if report["equal_cost_alternative"]:
            self.stdout.write(f"  {report['equal_cost_alternative']['sentence']}")
        compared = (report["recommendation"] or {}).get("rent_vs_buy")
        if compared:
            self.stdout.write(f"  rent or buy: {compared['sentence']}")
