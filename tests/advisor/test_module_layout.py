"""The sizing charts and the portability rules as modules of a readable size (H11).

Before the split, advisor/charts.py was one 554-line module and
advisor/domain/portability/rules.py one 572-line module holding the catalogue, the decisions
and the stack facts together; the size and layout tests below fail on them and pass on the
split. The import tests pin the names callers use, so the split changes no caller.
"""

from pathlib import Path

import pytest

import advisor.charts as charts
import advisor.domain.portability as portability
from advisor.domain.portability import decisions, rules

CHART_MODULES = {"__init__", "geometry", "axes", "memory", "scatter", "schedule", "points"}
PORTABILITY = Path(portability.__file__).parent
MAX_CHART_MODULE_LINES = 300
MAX_PORTABILITY_MODULE_LINES = 400


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def test_charts_is_a_package_of_geometry_axes_and_one_module_per_chart():
    package = Path(charts.__file__).parent
    assert Path(charts.__file__).name == "__init__.py"
    assert {path.stem for path in package.glob("*.py")} == CHART_MODULES


@pytest.mark.parametrize("module", sorted(CHART_MODULES))
def test_no_chart_module_is_over_300_lines(module):
    assert _lines(Path(charts.__file__).parent / f"{module}.py") <= MAX_CHART_MODULE_LINES


def test_the_chart_names_callers_use_come_from_the_package():
    used = {"Axis", "MemoryBar", "Point", "format_number", "linear_ticks", "log_ticks"}
    used |= {"memory_chart", "pareto_frontier", "scatter_chart"}
    assert used <= set(charts.__all__)
    assert all(callable(getattr(charts, name)) for name in used)


@pytest.mark.parametrize("path", sorted(PORTABILITY.glob("*.py")), ids=lambda path: path.name)
def test_no_portability_module_is_over_400_lines(path):
    assert _lines(path) <= MAX_PORTABILITY_MODULE_LINES


def test_the_rule_catalogue_and_the_decisions_live_in_separate_modules():
    assert not hasattr(rules, "DECISIONS") and not hasattr(rules, "STACK_FACTS")
    assert set(decisions.DECISIONS) == set(rules.RULES)


def test_what_callers_import_from_rules_still_comes_from_rules():
    for name in ("INFO", "RE_TUNE", "REWRITE_RISK", "SEVERITIES", "RULES", "Rule"):
        assert hasattr(rules, name), name


@pytest.mark.parametrize(
    ("package", "directory"),
    [(charts, Path(charts.__file__).parent), (portability, PORTABILITY)],
    ids=["charts", "portability"],
)
def test_each_package_docstring_names_its_modules_and_what_it_may_import(package, directory):
    doc = package.__doc__
    for path in directory.glob("*.py"):
        if path.stem != "__init__":
            assert f"{path.stem}.py" in doc, path.name
    assert "import" in doc
