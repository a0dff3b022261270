"""The README is a quick start and the reference lives in docs/ (mkdocs.yml): the README stays
short and keeps its commands, every page the nav lists exists, and the benches' figures reach the
docs only by inclusion (bench/results/*.md through snippets, JSON-only results through the
scripts/mkdocs_bench_json.py hook), never pasted by hand, so they cannot drift."""

import importlib.util
import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
RESULTS = ROOT / "bench" / "results"
MAX_README_LINES = 200
SNIPPET = re.compile(r'^--8<-- "(?P<path>[^"]+)"$', re.M)
BENCH_JSON = re.compile(r"^<!-- bench-json: (?P<path>[^ ]+) -->$", re.M)
# A measured figure: a number with a fractional part (12.3, 0.087, 8.14x, 6.9%). One with a
# single significant digit (0.2%, 3.0) is too common to say it was copied, so it is not counted.
FIGURE = re.compile(r"(?<![\w.])[-+]?\d[\d,]*\.\d+(?:%|x)?(?![\w.])")
# What is not prose: fenced blocks, code spans (commands, settings) and the include lines.
NOT_PROSE = re.compile(r"^```.*?^```|`[^`\n]*`|^--8<-- .*?$|^<!-- bench-json: .*?-->$", re.M | re.S)


class _ConfigLoader(yaml.SafeLoader):
    """mkdocs.yml's `!relative` tag read as its plain value."""


_ConfigLoader.add_constructor("!relative", lambda loader, node: loader.construct_scalar(node))


def _config() -> dict:
    return yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=_ConfigLoader)


def _nav_pages(nav: list) -> list[str]:
    pages: list[str] = []
    for entry in nav:
        for value in entry.values() if isinstance(entry, dict) else [entry]:
            pages += _nav_pages(value) if isinstance(value, list) else [value]
    return pages


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def bench_figures(markdown: str) -> set[str]:
    """The figures a results file's tables hold: every cell but a row's name. Tables listing
    one row per published measurement (first column `row`) are left out: their cells are the
    sources' inputs and per-row outputs the sizing pages cite as the model's constants."""
    figures: set[str] = set()
    header: list[str] | None = None
    for line in markdown.splitlines():
        if not line.startswith("|"):
            header = None
        elif header is None:
            header = _cells(line)
        elif header[0] != "row" and not set(line.strip()) <= set("|-: "):
            for cell in _cells(line)[1:]:
                figures |= {figure.lstrip("+-") for figure in FIGURE.findall(cell)}
    return {figure for figure in figures if _significant_digits(figure) > 1}


def _significant_digits(figure: str) -> int:
    return len(re.sub(r"\D", "", figure).strip("0"))


def pasted_figures(prose: str, figures: set[str]) -> list[str]:
    """The figures in a page's prose (includes, code and commands aside) that a bench holds."""
    return [
        figure
        for figure in (match.lstrip("+-") for match in FIGURE.findall(NOT_PROSE.sub("", prose)))
        if figure in figures
    ]


def _pages_and_readmes() -> list[Path]:
    return [*sorted(DOCS.glob("*.md")), ROOT / "README.md", ROOT / "bench" / "README.md"]


def _included(pattern: re.Pattern) -> set[str]:
    return {
        match["path"] for page in DOCS.glob("*.md") for match in pattern.finditer(page.read_text())
    }


def test_the_readme_is_a_quick_start_under_200_lines():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) < MAX_README_LINES, f"README.md has {len(lines)} lines"


@pytest.mark.parametrize(
    "command",
    [
        "make run ",
        "make test ",
        "SECRET_KEY=$(python3 -c 'import secrets; print(secrets.token_urlsafe(50))') "
        "docker compose up\n",
    ],
)
def test_the_readme_keeps_the_commands_ci_and_people_run(command):
    assert command in (ROOT / "README.md").read_text()


def test_the_readme_shows_four_screenshots_that_exist():
    images = re.findall(r"!\[[^\]]*\]\((docs/img/[^)]+\.png)\)", (ROOT / "README.md").read_text())
    assert len(images) == 4
    assert all((ROOT / image).is_file() for image in images), images


def test_every_page_the_nav_lists_exists_and_every_page_is_listed():
    listed = _nav_pages(_config()["nav"])
    missing = [page for page in listed if not (DOCS / page).is_file()]
    assert not missing, f"in the nav but not in docs/: {missing}"
    assert sorted(path.name for path in DOCS.glob("*.md")) == sorted(listed)


def test_every_bench_result_is_included_in_the_docs():
    included = _included(SNIPPET) | _included(BENCH_JSON)
    markdown = {f"bench/results/{path.name}" for path in RESULTS.glob("*.md")}
    json_only = {
        f"bench/results/{path.name}"
        for path in RESULTS.glob("*.json")
        if not path.with_suffix(".md").exists() and path.name != "accuracy_baseline.json"
    }
    assert markdown | json_only <= included, sorted((markdown | json_only) - included)


def test_the_accuracy_page_includes_the_bench_table_instead_of_copying_it():
    page = (DOCS / "accuracy.md").read_text()
    assert '--8<-- "bench/results/accuracy.md"' in page
    table_rows = [
        line
        for line in (RESULTS / "accuracy.md").read_text().splitlines()
        if line.startswith("|") and not set(line) <= set("|-: ")
    ]
    assert not [row for row in table_rows if row in page]


@pytest.mark.parametrize("page", _pages_and_readmes(), ids=lambda path: str(path.relative_to(ROOT)))
def test_no_page_pastes_a_figure_a_bench_result_holds(page):
    figures = set().union(*(bench_figures(path.read_text()) for path in RESULTS.glob("*.md")))
    assert not pasted_figures(page.read_text(), figures)


def test_a_pasted_median_is_caught_and_an_included_one_is_not():
    results = "| category | ours |\n| --- | ---: |\n| decode_speed | 8.4% (13) |\n"
    figures = bench_figures(results)
    assert pasted_figures("Decode is off by **8.4%** (13 rows).", figures) == ["8.4%"]
    assert pasted_figures('--8<-- "bench/results/accuracy.md"\nLlama 3.1 8B', figures) == []


def test_the_bench_json_hook_shows_every_figure_of_a_results_file(tmp_path):
    spec = importlib.util.spec_from_file_location(
        "mkdocs_bench_json", ROOT / "scripts" / "mkdocs_bench_json.py"
    )
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    results = tmp_path / "refresh.json"
    results.write_text(json.dumps({"quotes": 733, "ours": {"insert_queries": 17}, "runs": [0.5]}))
    table = hook.bench_json_table(results)
    assert "| `quotes` | 733 |" in table
    assert "| `ours.insert_queries` | 17 |" in table
    assert "| `runs.0` | 0.5 |" in table


def test_the_site_builds_strictly(tmp_path):
    built = subprocess.run(
        [ROOT / ".venv" / "bin" / "mkdocs", "build", "--strict", "--site-dir", tmp_path / "site"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert built.returncode == 0, built.stderr
    accuracy = (tmp_path / "site" / "accuracy" / "index.html").read_text()
    assert "Held out" in accuracy  # the bench's table, included
