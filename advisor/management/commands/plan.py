import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from advisor.api.capacity import CapacityRequestSerializer, capacity_answer
from advisor.management.command_errors import serializer_errors_text
from advisor.management.model_source import (
    add_model_source_arguments,
    add_ownership_argument,
    model_source_data,
)

# Options passed to the request as given (numbers and words).
OPTIONS = [
    "requests_per_second",
    "average_requests_per_second",
    "prompt_tokens",
    "output_tokens",
    "prompt_tokens_p95",
    "output_tokens_p95",
    "ttft_p95_ms",
    "itl_p95_ms",
    "e2e_p95_ms",
    "weight_dtype",
    "kv_dtype",
    "stack",
    "gpu_memory_utilization",
    "pricing_model",
    "num_layers",
    "hidden_size",
    "num_kv_heads",
    "max_gpus",
    "max_candidates",
]
# Comma-separated on the command line, lists in the request.
LIST_OPTIONS = ["providers", "exclude_providers", "regions", "hourly_requests_per_second"]


def _money(value: float | None) -> str:
    return f"${value:,.0f}" if value is not None else "-"


def _p95(tokens: int | None) -> str:
    return f" (p95 {tokens:,})" if tokens else ""


class Command(BaseCommand):
    help = (
        "Plan capacity to a service-level objective: how many of which GPU serve a peak "
        "request rate within p95 latency targets, and the monthly bill. The same engine and "
        "JSON as POST /api/v1/advice/capacity."
    )

    def add_arguments(self, parser: Any) -> None:
        add_model_source_arguments(parser)
        for name, kind, what in (
            ("requests_per_second", float, "requests per second at peak (required)"),
            ("average_requests_per_second", float, "the average rate (default: the peak)"),
            ("prompt_tokens", int, "the mean prompt in tokens (required)"),
            ("output_tokens", int, "the mean answer in tokens (required)"),
            ("prompt_tokens_p95", int, "the p95 prompt in tokens, when known"),
            ("output_tokens_p95", int, "the p95 answer in tokens, when known"),
            ("ttft_p95_ms", float, "p95 time to first token, ms"),
            ("itl_p95_ms", float, "p95 inter-token latency, ms"),
            ("e2e_p95_ms", float, "p95 end-to-end time, ms"),
            ("gpu_memory_utilization", float, "the stack's memory fraction"),
            ("num_layers", int, "with --params"),
            ("hidden_size", int, "with --params"),
            ("num_kv_heads", int, "with --params"),
            ("max_gpus", int, "at most this many GPUs per replica"),
            ("max_candidates", int, "candidates in the JSON (0: all)"),
        ):
            parser.add_argument(f"--{name.replace('_', '-')}", dest=name, type=kind, help=what)
        parser.add_argument("--weight-dtype", dest="weight_dtype")
        parser.add_argument("--kv-dtype", dest="kv_dtype")
        parser.add_argument("--stack", help="vllm (default), sglang or tensorrt_llm")
        parser.add_argument(
            "--pricing-model", dest="pricing_model", help="on_demand (default), spot or any"
        )
        for name, what in (
            ("providers", "only these providers' offers"),
            ("exclude_providers", "no offers of these providers"),
            ("regions", "only regions starting with these prefixes"),
            ("hourly_requests_per_second", "the rate in each hour of a day, 24 values"),
        ):
            parser.add_argument(
                f"--{name.replace('_', '-')}", dest=name, help=f"{what}, comma-separated"
            )
        parser.add_argument("--exclude-marketplaces", action="store_true")
        parser.add_argument(
            "--include-rejected", action="store_true", help="list what does not run too (--json)"
        )
        add_ownership_argument(parser)
        parser.add_argument("--top", type=int, default=10, help="Candidates to print.")
        parser.add_argument("--json", action="store_true", help="Print the full JSON answer.")

    def handle(self, *args: Any, **options: Any) -> None:
        data: dict[str, Any] = {
            name: options[name] for name in OPTIONS if options.get(name) is not None
        }
        data |= model_source_data(options)
        for name in LIST_OPTIONS:
            if options[name]:
                data[name] = [item.strip() for item in options[name].split(",") if item.strip()]
        data["exclude_marketplaces"] = options["exclude_marketplaces"]
        data["include_rejected"] = options["include_rejected"]
        if options["ownership"] is not None:
            data["ownership"] = options["ownership"]
        serializer = CapacityRequestSerializer(data=data)
        if not serializer.is_valid():
            raise CommandError(serializer_errors_text(serializer.errors))
        report = capacity_answer(serializer.validated_data)
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        self._print(report, options["top"])

    def _print(self, report: dict, top: int) -> None:
        load = report["load"]
        targets = ", ".join(f"{name} {value:,g}" for name, value in report["objectives"].items())
        self.stdout.write(
            f"{report['model']['name']}: {load['requests_per_second']:,g} requests/s at peak, "
            f"{load['prompt_tokens']:,}-token prompts{_p95(load['prompt_tokens_p95'])}, "
            f"{load['output_tokens']:,}-token answers{_p95(load['output_tokens_p95'])}; "
            f"{targets}"
        )
        plan = report["plan"]
        if plan is None:
            self.stdout.write(self.style.WARNING("No priced candidate meets the objectives."))
            for change in report["what_would_meet"] or []:
                self.stdout.write(f"  {change['sentence']}")
        else:
            bill = plan["usd_per_month"]
            self.stdout.write(
                self.style.SUCCESS(
                    f"Plan: {plan['replicas']} x {plan['gpu_count']}x {plan['gpu_name']} "
                    f"({plan['gpus_total']} GPU{'' if plan['gpus_total'] == 1 else 's'}), "
                    f"{_money(bill['on_demand'])}/month on demand, "
                    f"{_money(bill['spot'])}/month on spot"
                )
            )
            for name, what in (
                ("reserved_1y", "reserved for 1 year"),
                ("reserved_3y", "reserved for 3 years"),
                ("scheduled", "on the 24-hour schedule"),
            ):
                if bill[name] is not None:
                    self.stdout.write(f"  {_money(bill[name])}/month {what}")
            if plan["replicas_by_hour"]:
                hours = " ".join(str(count) for count in plan["replicas_by_hour"])
                self.stdout.write(
                    f"  replicas by hour from midnight: {hours} "
                    f"({plan['reserved_replicas']} reserved around the clock)"
                )
        if plan is not None and plan["rent_vs_buy"]:
            self.stdout.write(f"  rent or buy: {plan['rent_vs_buy']['sentence']}")
        for candidate in report["candidates"][:top]:
            if not candidate["meets_objectives"]:
                self.stdout.write(
                    f"  {candidate['gpu_count']}x {candidate['gpu_name']:<24} {candidate['reason']}"
                )
                continue
            bill = candidate["usd_per_month"]
            ttft = candidate["ttft_p95_ms"]["expected"]
            self.stdout.write(
                f"  {candidate['gpu_count']}x {candidate['gpu_name']:<24} "
                f"{candidate['max_requests_per_second_per_replica']:>8,.2f} req/s/replica "
                f"x{candidate['replicas']:<4} {_money(bill['on_demand']):>10} on demand "
                f"{_money(bill['spot']):>10} spot  TTFT p95 "
                + (f"{ttft:,.0f} ms" if ttft is not None else "-")
            )
