"""The comparison of both tools' runs, and its Markdown tables."""

import statistics

IDLE_AGREEMENT_PP = 0.5


def median_of(runs: list[dict], key: str) -> float | None:
    values = [run[key] for run in runs if run["ranks"] is not None]
    return round(statistics.median(values), 3) if values else None


def compare_idle(ours: list[dict] | None, hta: list[dict] | None) -> list[dict]:
    by_rank = {rank["rank"]: rank for rank in hta or []}
    rows = []
    for rank in ours or []:
        theirs = by_rank.get(rank["rank"])
        row = {
            "rank": rank["rank"],
            "ours_idle_pct": round(rank["idle_pct"], 3),
            "hta_idle_pct": theirs["idle_pct"] if theirs else None,
            "ours_kernel_time_us": rank["kernel_time_us"],
            "hta_kernel_time_us": theirs["kernel_time_us"] if theirs else None,
        }
        if theirs:
            row["difference_pp"] = round(rank["idle_pct"] - theirs["idle_pct"], 3)
            row["agrees"] = abs(row["difference_pp"]) <= IDLE_AGREEMENT_PP
        rows.append(row)
    return rows


def markdown(results: dict) -> str:
    machine = results["machine"]
    hta = results.get("hta_versions") or {}
    lines = [
        "# Trace analysis: ours against Holistic Trace Analysis",
        "",
        f"{machine['date_utc']}, {machine['cpus_usable']} CPUs usable ({machine['cpu_model']}), "
        f"{machine['memory_gib']} GiB, revision {machine['git_revision']}; load average "
        f"{machine['load_average_at_start'][0]} at start, "
        f"{machine.get('load_average_at_end', ['?'])[0]} at end.",
        f"Ours: Python {results['python_ours']}, `python -m jobs.runner --kind trace` in a child "
        f"process. HTA {hta.get('holistictraceanalysis', '?')} (torch {hta.get('torch', '?')}, "
        f"pandas {hta.get('pandas', '?')}, numpy {hta.get('numpy', '?')}, Python "
        f"{hta.get('python', '?')}), `TraceAnalysis(...).get_temporal_breakdown()` in a child "
        f"process, HTA_DISABLE_NS_ROUNDING=1. Medians of {results['repeats']} runs each.",
        "Produced by `.venv/bin/python bench/trace_vs_hta.py`; see bench/README.md.",
        "",
        "| input | events | file MiB | ours wall s | ours peak RSS MiB | HTA wall s | "
        "HTA peak RSS MiB | speedup (HTA/ours) | memory (ours/HTA) | speedup in CPU time |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, row in results["inputs"].items():
        lines.append(
            f"| {name} | {row['events']:,} | {row['file_mib']} | {_fmt(row['ours']['wall_s'])} | "
            f"{_fmt(row['ours']['peak_rss_mib'])} | {_fmt(row['hta']['wall_s'])} | "
            f"{_fmt(row['hta']['peak_rss_mib'])} | {_fmt(row['speedup'], 'x')} | "
            f"{_fmt(row['memory_ratio'])} | {_fmt(row['speedup_cpu_time'], 'x')} |"
        )
    goals = results["goals"]
    lines += [
        "",
        "Speedup is by wall time, the goal's measure; both tools run on one core, so the "
        "ratio of their CPU times (user + system) is a check that moves less when another "
        "process shares the machine.",
        "",
        f"Goals: speedup >= {goals['speedup_min']}x: "
        f"**{'met' if goals['speedup_met'] else 'NOT met'}**; memory <= "
        f"{goals['memory_ratio_max']} of HTA's peak: "
        f"**{'met' if goals['memory_met'] else 'NOT met'}**; idle % within "
        f"{IDLE_AGREEMENT_PP} pp of HTA's on every rank: "
        f"**{'yes' if goals['idle_agrees'] else 'NO'}**"
        + (" (cut short by the time cap)" if results.get("truncated_by_time_cap") else "")
        + ".",
        "",
        "## Idle % per rank",
        "",
        "| input | rank | ours idle % | HTA idle % | difference pp | ours window us | "
        "HTA window us |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, row in results["inputs"].items():
        for rank in row["idle_by_rank"]:
            lines.append(
                f"| {name} | {rank['rank']} | {rank['ours_idle_pct']} | "
                f"{_fmt(rank['hta_idle_pct'])} | {_fmt(rank.get('difference_pp'))} | "
                f"{rank['ours_kernel_time_us']:,.0f} | {_fmt(rank['hta_kernel_time_us'], ',')} |"
            )
    lines += [
        "",
        f"They should agree within {IDLE_AGREEMENT_PP} pp (HTA rounds its percentages to two "
        "decimals).",
        "",
        "## Where the time goes",
        "",
        "| input | tool | runs (wall s) | CPU s (median) | peak RSS sampled over the process "
        "tree MiB | processes | phases s (last run) |",
        "|---|---|---|---:|---:|---:|---|",
    ]
    for name, row in results["inputs"].items():
        for tool in ("ours", "hta"):
            runs = row[tool]["runs"]
            walls = ", ".join(str(run["wall_s"]) for run in runs)
            phases = runs[-1].get("phases_s", "") if runs else ""
            if phases:
                phases = ", ".join(f"{key} {value}" for key, value in phases.items())
            lines.append(
                f"| {name} | {tool} | {walls} | {_fmt(row[tool]['cpu_s'])} | "
                f"{_fmt(row[tool]['sampled_tree_peak_rss_mib'])} | "
                f"{max((run['processes'] for run in runs), default='-')} | {phases} |"
            )
    library = results.get("library_call")
    if library:
        lines += [
            "",
            "In-process `jobs.domain.traces.analyze_traces` (no interpreter start, no JSON "
            "report), median of "
            + ", ".join(f"{name} {value['median_s']} s" for name, value in library.items())
            + ".",
        ]
    return "\n".join(lines) + "\n"


def _fmt(value: object, style: str = "") -> str:
    if value is None:
        return "-"
    if style == "x":
        return f"{value}x"
    if style == ",":
        return f"{value:,.0f}"
    return str(value)
