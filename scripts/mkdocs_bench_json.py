"""MkDocs hook: a `<!-- bench-json: bench/results/NAME.json -->` line becomes a table of every
figure in that results file.

Some benches write JSON only (no Markdown table); this shows their figures in the docs without
anyone copying them. Paths are relative to the repository root (where mkdocs.yml is); a missing
or unreadable file stops the build rather than leaving a hole in the page.
"""

import json
import re
from pathlib import Path
from typing import Any

MARKER = re.compile(r"^<!-- bench-json: (?P<path>bench/results/[\w.-]+\.json) -->$", re.M)


def _leaves(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    """Every scalar in a JSON document, with its dotted path."""
    if isinstance(value, dict):
        return [row for key, item in value.items() for row in _leaves(item, f"{prefix}{key}.")]
    if isinstance(value, list):
        return [
            row for index, item in enumerate(value) for row in _leaves(item, f"{prefix}{index}.")
        ]
    return [(prefix.rstrip("."), str(value))]


def bench_json_table(results_path: Path) -> str:
    """The results file as a two-column Markdown table: field, value."""
    rows = _leaves(json.loads(results_path.read_text()))
    escaped = [(field, value.replace("|", "\\|")) for field, value in rows]
    lines = ["| field | value |", "| --- | ---: |"]
    lines += [f"| `{field}` | {value} |" for field, value in escaped]
    return "\n".join(lines)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    root = Path(config["config_file_path"]).parent
    return MARKER.sub(lambda match: bench_json_table(root / match["path"]), markdown)
