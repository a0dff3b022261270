"""The bundled list of well-known open models (advisor/data/models/)."""

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from advisor.domain.sizing.architecture import ModelArchitecture, architecture_from_config

MODELS_DIR = Path(__file__).resolve().parents[2] / "data" / "models"


@dataclass(frozen=True)
class BundledModel:
    slug: str
    name: str
    hf_id: str
    source_url: str
    config: dict
    family: str | None = None
    release_year: int | None = None
    license: str | None = None  # as the model card's `license:` names it
    context_length: int | None = None  # tokens

    def architecture(self) -> ModelArchitecture:
        return architecture_from_config(self.config, self.name)


@cache
def bundled_models() -> dict[str, BundledModel]:
    index = json.loads((MODELS_DIR / "index.json").read_text())
    return {
        entry["slug"]: BundledModel(
            slug=entry["slug"],
            name=entry["name"],
            hf_id=entry["hf_id"],
            source_url=entry["source_url"],
            config=json.loads((MODELS_DIR / f"{entry['slug']}.json").read_text()),
            family=entry.get("family"),
            release_year=entry.get("release_year"),
            license=entry.get("license"),
            context_length=entry.get("context_length"),
        )
        for entry in index
    }
