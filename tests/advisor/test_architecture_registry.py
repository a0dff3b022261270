"""The architecture readers as a package: one module per family, chosen by `model_type`.

Before the split, advisor/domain/sizing/architecture.py was one 678-line module with every
family's reader in it; the size tests below fail on it and pass on the package. The registry
tests pin what the next families rely on: a reader registered in READERS is dispatched to and
named among the supported types, and any other model_type is refused by name.
"""

import ast
import json
from pathlib import Path

import pytest

import advisor.domain.sizing.architecture as architecture
from advisor.domain.sizing.architecture import (
    FAMILIES,
    READERS,
    UnsupportedArchitecture,
    architecture_from_config,
)
from advisor.domain.sizing.architecture.registry import READERS as REGISTRY_READERS
from advisor.domain.sizing.bundled_models import MODELS_DIR

PACKAGE = Path(architecture.__file__).parent
MAX_MODULE_LINES = 300
MAX_FUNCTION_LINES = 80
FAMILY_MODULES = {"decoder", "deepseek", "falcon", "gpt2", "bert", "t5"}
FAMILY_MODULES |= {"gpt_oss", "olmo2", "mistral3", "glm4_moe", "granite", "cohere2"}
FAMILY_MODULES |= {"qwen3", "qwen2_moe", "llama4", "gemma3"}


def test_architecture_is_a_package_of_one_module_per_family():
    modules = {path.stem for path in PACKAGE.glob("*.py")}
    assert modules >= FAMILY_MODULES
    assert {"model", "config_values", "registry", "from_param_count"} <= modules


@pytest.mark.parametrize("path", sorted(PACKAGE.glob("*.py")), ids=lambda path: path.name)
def test_no_module_of_the_package_is_over_300_lines(path):
    assert len(path.read_text().splitlines()) <= MAX_MODULE_LINES


@pytest.mark.parametrize("path", sorted(PACKAGE.glob("*.py")), ids=lambda path: path.name)
def test_no_function_of_the_package_is_over_80_lines(path):
    long = [
        (node.name, node.end_lineno - node.lineno + 1)
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef)
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert not long


def test_every_model_type_is_read_by_the_read_function_of_a_family_module():
    for model_type, reader in READERS.items():
        module = reader.__module__.rpartition(".")[2]
        assert (module, reader.__name__) in {(name, "read") for name in FAMILY_MODULES}, model_type


def test_the_old_name_families_is_the_registry():
    assert FAMILIES is READERS is REGISTRY_READERS


def test_an_unknown_model_type_is_refused_by_name_listing_every_registered_type():
    with pytest.raises(UnsupportedArchitecture) as refusal:
        architecture_from_config({"model_type": "qwen9"})
    assert str(refusal.value) == (
        f"model_type='qwen9' is not supported (supported: {', '.join(sorted(READERS))})"
    )


def test_a_family_registered_in_readers_is_dispatched_to_and_listed(monkeypatch):
    llama = json.loads((MODELS_DIR / "llama-3.1-8b.json").read_text())
    monkeypatch.setitem(READERS, "llama_like", READERS["llama"])
    counted = architecture_from_config({**llama, "model_type": "llama_like"}, "x")
    assert counted.family == "llama_like"
    assert counted.params_total == architecture_from_config(llama).params_total
    with pytest.raises(UnsupportedArchitecture, match="llama_like"):
        architecture_from_config({"model_type": "unknown"})
