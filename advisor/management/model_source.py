"""The model a `size` or `plan` command names: its --model, --config file or --params, as the
request data the API's serializers read (they decode and judge it as for the API)."""

from typing import Any

from django.core.management.base import CommandError


def model_source_data(options: dict[str, Any]) -> dict[str, Any]:
    if options["model"]:
        return {"model": options["model"]}
    if options["config"]:
        try:
            return {"config": options["config"].read_text(encoding="utf-8-sig")}
        except (OSError, UnicodeDecodeError) as error:
            raise CommandError(f"cannot read {options['config']}: {error}") from error
    return {"params": int(options["params"])}
