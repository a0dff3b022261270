"""The house rules that a reviewer would otherwise check by hand (docs/layout.md, House rules):
no module over 500 lines outside migrations, and every package says in its __init__.py what
lives there and what it may import."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("accounts", "advisor", "catalog", "config", "jobs", "bench", "tests")
MAX_MODULE_LINES = 500


def _modules() -> list[Path]:
    return sorted(
        path
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if "migrations" not in path.parts and "fixtures" not in path.parts
    )


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_is_over_500_lines(path):
    lines = path.read_text().count("\n")
    assert lines <= MAX_MODULE_LINES, f"{path.relative_to(ROOT)} has {lines} lines"


@pytest.mark.parametrize(
    "path",
    [p for p in _modules() if p.name == "__init__.py" and p.parts[len(ROOT.parts)] != "tests"],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_every_package_says_what_lives_there(path):
    assert ast.get_docstring(ast.parse(path.read_text())), f"{path.relative_to(ROOT)}: no docstring"
