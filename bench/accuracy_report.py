"""The tables of bench/accuracy.py: median errors by category (now, before, peers) over the
held-out rows and over the in-sample rows apart, every row with its mark, the constants and the
rows they were fitted on, why a peer's cell is empty, and the sources."""

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


def _beside_cell(median: dict | None, ours_there: dict | None) -> str:
    """Another engine's (or a peer's) median, its row count, and ours on those same rows."""
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


def _sample(entry: dict) -> str:
    if "duplicate_of" in entry:
        return f"duplicate of {entry['duplicate_of']}"
    if "identity" in entry:
        return "identity"
    return {"held_out": "held out", "in_sample": "in sample"}[entry["sample"]]


SAMPLE_TITLES = {
    "held_out": "Held out (no constant was fitted on these rows): accuracy",
    "in_sample": "In sample (a constant was fitted on these rows): fit quality, not accuracy",
}


def _sample_table(results: dict, sample: str) -> list[str]:
    medians = results["median_abs_error_pct"][sample]
    inside = results["inside_by_category"][sample]
    peers = list(medians["peers"])
    categories = sorted({e["category"] for e in results["rows"] if e["sample"] == sample})
    before = results["baseline"]["commit"][:7]
    lines = [
        f"### {SAMPLE_TITLES[sample]}",
        "",
        _row(
            [
                "category",
                "ours",
                f"before ({before})",
                *[PEER_NAMES[p] for p in peers],
                "inside now",
                "inside before",
            ]
        ),
        _row(["---", "---:", "---:", *["---:"] * len(peers), "---:", "---:"]),
    ]
    for category in categories:
        beside = [
            _beside_cell(
                medians["before"].get(category), medians["ours_on_before_rows"].get(category)
            ),
            *(
                _beside_cell(
                    medians["peers"][p].get(category), medians["ours_on_peer_rows"][p].get(category)
                )
                for p in peers
            ),
        ]
        lines.append(
            _row(
                [
                    category,
                    _cell(medians["ours"].get(category)),
                    *beside,
                    inside["ours"].get(category, ""),
                    inside["before"].get(category, ""),
                ]
            )
        )
    return [*lines, ""]


def _moe_table(results: dict) -> list[str]:
    """The mixture-of-experts rows among the held out: counted in the table above, shown apart."""
    moe = results["moe_held_out"]
    lines = [
        "#### Of which mixture-of-experts models (held out)",
        "",
        _row(["category", "ours", "inside"]),
        _row(["---", "---:", "---:"]),
    ]
    for category, median in sorted(moe["median_abs_error_pct"].items()):
        lines.append(_row([category, _cell(median), moe["inside"].get(category, "")]))
    return [*lines, ""]


def markdown(results: dict) -> str:
    medians = results["median_abs_error_pct"]
    peers = list(medians["held_out"]["peers"])
    peer_heads = [PEER_NAMES[p] for p in peers]
    counts = {
        sample: sum(e["sample"] == sample for e in results["rows"]) for sample in SAMPLE_TITLES
    }
    duplicates = sum(e["sample"] is None for e in results["rows"])
    lines = [
        "## How accurate is this: median |error| of the expected value, by category",
        "",
        f"Rows: {len(results['rows'])} published measurements "
        "(`tests/fixtures/calibration/published.json`): "
        f"{counts['held_out']} held out, {counts['in_sample']} in sample (a calibrated "
        "constant was fitted on them: `advisor/domain/provenance.py`), "
        f"{duplicates} duplicates or identities (in no median). Cells: median |error| of the "
        "expected value (rows it covers); for the engine before and for a peer, its median "
        "(rows it answers; ours on the same rows).",
        "",
        *_sample_table(results, "held_out"),
        *_moe_table(results),
        *_sample_table(results, "in_sample"),
    ]
    lines += [
        "## Every row",
        "",
        _row(
            [
                "row",
                "sample",
                "published",
                "ours low / expected / high",
                "error",
                "inside",
                "before: expected (error)",
                "inside before",
                *peer_heads,
            ]
        ),
        _row(
            ["---", "---", "---:", "---:", "---:", ":---:", "---:", ":---:", *["---:"] * len(peers)]
        ),
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
                    _sample(entry),
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
    lines += ["", "## Duplicates and identities (in no median)", ""]
    for entry in results["rows"]:
        if "identity" in entry:
            lines.append(f"- {entry['id']}: {entry['identity']}")
        elif "duplicate_of" in entry:
            lines.append(f"- {entry['id']}: the same measurement as {entry['duplicate_of']}")
    lines += ["", "## Calibrated constants and the rows they were fitted on", ""]
    for name, fit in results["fitted"].items():
        rows = ", ".join(fit["fitted_on"]) or f"no calibration row ({fit['source']})"
        lines.append(f"- `{name}`: {rows}")
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
