"""The tables of bench/accuracy.py: median errors by category (now, before, peers), every row,
why a peer's cell is empty, and the sources."""

PEER_NAMES = {"llm_analysis": "llm-analysis", "accelerate": "accelerate", "deepspeed": "DeepSpeed"}


def _number(value: float | None) -> str:
    if value is None:
        return ""
    magnitude = abs(value)
    if magnitude >= 1000:
        return f"{value:,.0f}"
    if magnitude >= 100:
        return f"{value:.1f}"
    return f"{value:.4g}"


def _cell(median: dict | None) -> str:
    if not median:
        return ""
    return f"{median['median_abs_error_pct']:.1f}% ({median['rows']})"


def _peer_cell(median: dict | None, ours_there: dict | None) -> str:
    """The peer's median, its row count, and ours on those same rows."""
    if not median:
        return ""
    return (
        f"{median['median_abs_error_pct']:.1f}% ({median['rows']}; ours "
        f"{ours_there['median_abs_error_pct']:.1f}%)"
    )


def _inside(stored: dict | None) -> str:
    if not stored or "error" in stored:
        return "error" if stored else ""
    return "yes" if stored["inside"] else "**no**"


def _ours(stored: dict, published: dict) -> str:
    if "error" in stored:
        return stored["error"][:60]
    if published["quantity"] == "fits":
        return "fits" if stored["fits"] else "does not fit"
    return f"{_number(stored['low'])} / {_number(stored['expected'])} / {_number(stored['high'])}"


def _published(published: dict) -> str:
    if published["quantity"] == "fits":
        return "fits" if published["value"] else "does not fit"
    return f"{_number(published['value'])} {published['unit']}"


def _error(stored: dict | None) -> str:
    value = (stored or {}).get("error_pct")
    return "" if value is None else f"{value:+.1f}%"


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def markdown(results: dict) -> str:
    medians = results["median_abs_error_pct"]
    before = results["baseline"]["commit"][:7]
    peers = [name for name in PEER_NAMES if name in medians.get("peers", {})]
    peer_heads = [PEER_NAMES[p] for p in peers]
    categories = sorted(
        {e["category"] for e in results["rows"]} | set(medians["ours"]),
        key=lambda c: (c == "all", c),
    )
    lines = [
        "## How accurate is this: median |error| of the expected value, by category",
        "",
        f"Rows: {len(results['rows'])} published measurements "
        f"(`tests/fixtures/calibration/published.json`). Cells: median |error| of the expected "
        "value (rows it covers; for a peer, ours on the same rows).",
        "",
        _row(
            [
                "category",
                "ours now",
                f"before ({before})",
                *peer_heads,
                "inside now",
                "inside before",
            ]
        ),
        _row(["---", "---:", "---:", *["---:"] * len(peers), "---:", "---:"]),
    ]
    inside = results["inside_by_category"]
    for category in categories:
        peer_cells = [
            _peer_cell(
                medians["peers"][p].get(category), medians["ours_on_peer_rows"][p].get(category)
            )
            for p in peers
        ]
        lines.append(
            _row(
                [
                    category,
                    _cell(medians["ours"].get(category)),
                    _cell(medians["before"].get(category)),
                    *peer_cells,
                    inside["ours"].get(category, ""),
                    inside["before"].get(category, ""),
                ]
            )
        )
    lines += [
        "",
        "## Every row",
        "",
        _row(
            [
                "row",
                "published",
                "ours low / expected / high",
                "error",
                "inside",
                "before: expected (error)",
                "inside before",
                *peer_heads,
            ]
        ),
        _row(["---", "---:", "---:", "---:", ":---:", "---:", ":---:", *["---:"] * len(peers)]),
    ]
    for entry in results["rows"]:
        ours, old = entry["ours"], entry["before"]
        old_text = _ours(old, entry["published"]) if old else ""
        if old and old.get("error_pct") is not None:
            old_text = f"{_number(old['expected'])} ({_error(old)})"
        peer_cells = [_number((entry["peers"].get(p) or {}).get("value")) for p in peers]
        lines.append(
            _row(
                [
                    entry["id"],
                    _published(entry["published"]),
                    _ours(ours, entry["published"]),
                    _error(ours),
                    _inside(ours),
                    old_text,
                    _inside(old),
                    *peer_cells,
                ]
            )
        )
    why = results.get("peers", {}).get("why_empty", {})
    if why:
        lines += ["", "## Why a peer's cell is empty", ""]
        for peer, reasons in why.items():
            for reason, count in reasons.items():
                lines.append(f"- {PEER_NAMES[peer]} ({count} rows): {reason}")
    if results.get("excluded"):
        lines += ["", "## Published figures left out", ""]
        for left_out in results["excluded"]:
            lines.append(f"- {left_out['id']}: {left_out['why']} ({left_out['source']['url']})")
    lines += ["", "## Sources", ""]
    for url in sorted({entry["source"]["url"] for entry in results["rows"]}):
        lines.append(f"- {url}")
    return "\n".join(lines) + "\n"
