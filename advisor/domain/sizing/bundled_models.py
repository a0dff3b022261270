"""The bundled list of well-known open models (advisor/data/models/)."""

import difflib
import json
import re
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


MAX_NAME_CHARS = 100
# Words people add that do not change the architecture: "Llama 3.1 8B Instruct" is Llama 3.1 8B.
_VARIANT_WORDS = re.compile(r"(instruct|chat|base|hf|it)$")


def _folded(text: str) -> str:
    """A name without case, separators or a trailing variant word: "Llama 3.1 70B",
    "llama-3.1-70b" and "LLAMA_3.1_70B-Instruct" fold alike."""
    folded = re.sub(r"[\s_\-/]+", "", text.strip().lower())
    return _VARIANT_WORDS.sub("", folded) or folded


@cache
def _slugs_by_folded_name() -> dict[str, str]:
    names: dict[str, str] = {}
    for slug, model in bundled_models().items():
        for name in (slug, model.name, model.hf_id.split("/")[-1]):
            names.setdefault(_folded(name), slug)
    return names


def bundled_slug_for(text: str) -> str | None:
    """The bundled model a name as people write it means ("Llama 3.1 70B", "qwen3 32b"), or
    None."""
    return _slugs_by_folded_name().get(_folded(text))


def nearest_bundled_slugs(text: str, count: int = 3) -> list[str]:
    """The bundled models whose names are closest to `text`, for a "did you mean"; none for
    text longer than any model name is written."""
    if len(text) > MAX_NAME_CHARS:
        return []
    names = _slugs_by_folded_name()
    close = difflib.get_close_matches(_folded(text), names, n=count * 3, cutoff=0.6)
    return list(dict.fromkeys(names[name] for name in close))[:count]
