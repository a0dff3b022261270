"""The benchmarks are scripts, not tests, so nothing ran them when the code they import moved
(bench/refresh.py imported a helper from catalog.services after it had moved to
catalog.services.refresh). Every name a benchmark imports from the project must exist."""

import ast
import importlib
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ("accounts", "advisor", "catalog", "config", "jobs", "tests", "bench")


def _imports() -> list[tuple[str, str, str]]:
    found = []
    for path in sorted((ROOT / "bench").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.level == 0
                and node.module.split(".")[0] in PROJECT
            ):
                found += [(path.name, node.module, alias.name) for alias in node.names]
    return found


@pytest.mark.parametrize(("script", "module", "name"), _imports())
def test_every_name_a_benchmark_imports_exists(script, module, name):
    imported = importlib.import_module(module)
    assert hasattr(imported, name) or importlib.util.find_spec(f"{module}.{name}"), (
        f"{script}: {module} has no {name}"
    )
