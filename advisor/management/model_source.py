"""The model a `size` or `plan` command names: its --model, --config file or --params, and the
rent-against-buy overrides (--ownership), as the request data the API's serializers read (they
decode and judge it as for the API)."""

import json
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError


def add_model_source_arguments(parser: Any) -> None:
    """--config, --model or --params: exactly one."""
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--config", type=Path, help="A Hugging Face config.json file.")
    source.add_argument(
        "--model",
        help=(
            "A bundled model (llama-3.1-8b, or its Hub id), or a Hugging Face Hub id, "
            "e.g. Qwen/Qwen3-8B or Qwen/Qwen3-8B@<revision>."
        ),
    )
    source.add_argument("--params", type=float, help="A bare parameter count, e.g. 7e9.")


def model_source_data(options: dict[str, Any]) -> dict[str, Any]:
    if options["model"]:
        return {"model": options["model"]}
    if options["config"]:
        try:
            return {"config": options["config"].read_text(encoding="utf-8-sig")}
        except (OSError, UnicodeDecodeError) as error:
            raise CommandError(f"cannot read {options['config']}: {error}") from error
    return {"params": int(options["params"])}


def add_ownership_argument(parser: Any) -> None:
    """--ownership: the request's `ownership` object as JSON."""
    parser.add_argument(
        "--ownership",
        type=json.loads,
        help='rent-against-buy overrides as JSON, e.g. \'{"pue": 1.2, "usd_per_kwh": 0.12}\'',
    )
