"""A small realistic repository (training script, CUDA extension, setup.py, requirements,
Dockerfile) gives the scorecard and verdicts a person would write down for it."""

import dataclasses
import json
from pathlib import Path

from jobs.domain.codescan import ScanLimits, Skipped, scan_paths

REPO = Path(__file__).resolve().parents[1] / "fixtures" / "codescan" / "repo"


def test_the_findings_are_the_expected_ones():
    report = scan_paths(REPO)
    found = [(f.rule_id, f.file, f.line, f.severity) for f in report.findings]
    assert found == [
        ("DEP003", "Dockerfile", 1, "re-tune"),
        ("WARP001", "csrc/layer_norm.cu", 4, "re-tune"),
        ("WARP002", "csrc/layer_norm.cu", 8, "rewrite-risk"),
        ("WARP003", "csrc/layer_norm.cu", 15, "rewrite-risk"),
        ("ASM002", "csrc/layer_norm.cu", 17, "re-tune"),
        ("DEP002", "requirements.txt", 1, "re-tune"),
        ("DEP002", "requirements.txt", 2, "re-tune"),
        ("DEP002", "requirements.txt", 5, "re-tune"),
        ("ARCH004", "setup.py", 8, "re-tune"),
        ("ARCH001", "setup.py", 11, "re-tune"),
        ("DEP001", "tinyllm/model.py", 12, "re-tune"),
        ("PREC001", "train.py", 12, "re-tune"),
        ("DEV003", "train.py", 23, "re-tune"),
        ("COMM001", "train.py", 29, "re-tune"),
        ("DEV003", "train.py", 31, "re-tune"),
        ("DEV002", "train.py", 32, "re-tune"),
        ("DEV004", "train.py", 35, "re-tune"),
        ("DEV001", "train.py", 38, "re-tune"),
        ("DEV001", "train.py", 39, "re-tune"),
    ]
    # The extension it builds (tinyllm_cuda) and its own package are not dependencies.
    assert not any("tinyllm" in f.code and f.rule_id == "DEP001" for f in report.findings)


def test_the_scorecard_answers_the_four_questions():
    scorecard = scan_paths(REPO).scorecard
    assert [(entry["question"], entry["answer"]) for entry in scorecard] == [
        ("Are matmuls going through a library or hand-tiled?", "portable"),
        ("Is precision a runtime policy or a compile-time constant?", "mixed"),
        ("Do collectives go through an abstraction?", "mixed"),
        ("Are memory sizes derived from a query or hard-coded?", "portable"),
    ]
    evidence = {entry["question"][:12]: entry["evidence"] for entry in scorecard}
    assert evidence["Are matmuls "][0] == "tinyllm/model.py:28 nn.Linear"
    assert evidence["Is precision"] == ["PREC001 train.py:12", "train.py:39 torch.autocast"]
    assert evidence["Do collectiv"] == ["COMM001 train.py:29", "train.py:45 dist.all_reduce"]
    assert evidence["Are memory s"] == ["train.py:23 mem_get_info"]


def test_the_verdicts_per_target():
    verdicts = scan_paths(REPO).verdicts
    rewrite = {
        "verdict": "rewrite",
        "deciding": ["WARP002 csrc/layer_norm.cu:8", "WARP003 csrc/layer_norm.cu:15"],
    }
    # Warp-width code is rewritten on every other vendor's part.
    assert verdicts == {
        "AMD ROCm": rewrite,
        "Intel oneAPI": rewrite,
        "NVIDIA part with less memory": {"verdict": "re-tune", "deciding": []},
        "Google TPU (XLA)": rewrite,
        "AWS Trainium (Neuron)": rewrite,
        "Intel Gaudi": rewrite,
    }


def test_counts_languages_and_sizes():
    report = scan_paths(REPO)
    assert report.counts["severity"] == {"rewrite-risk": 2, "re-tune": 17, "info": 0}
    assert report.counts["category"]["DEV"] == 6
    assert sum(report.counts["category"].values()) == len(report.findings)
    assert report.languages == {"Python": 4, "CUDA": 1, "requirements": 1, "Dockerfile": 1}
    assert report.files_scanned == 7
    assert report.bytes_scanned == sum(p.stat().st_size for p in REPO.rglob("*") if p.is_file())
    assert report.skipped == []


def test_the_report_is_plain_data():
    report = scan_paths(REPO)
    assert json.loads(json.dumps(dataclasses.asdict(report)))["verdicts"] == report.verdicts


def test_a_verdict_turns_on_the_deciding_findings(tmp_path):
    budget = "import torch\nHBM = 80 * 1024**3\nbatch = HBM // per_sample_bytes\n"
    (tmp_path / "budget.py").write_text(budget)
    (tmp_path / "comm.cu").write_text("#include <nccl.h>\nvoid f() { ncclAllReduce(a); }\n")
    (tmp_path / "conv.cpp").write_text("#include <cudnn.h>\n")
    verdicts = scan_paths(tmp_path).verdicts
    # MEM001 drives sizes (rewrite-risk) but memory only decides the smaller NVIDIA part.
    assert verdicts["AMD ROCm"] == {
        "verdict": "re-tune",
        "deciding": ["COMM002 comm.cu:1", "COMM002 comm.cu:2", "DEP004 conv.cpp:1"],
    }
    assert verdicts["Intel oneAPI"] == {
        "verdict": "rewrite",
        "deciding": ["COMM002 comm.cu:1", "COMM002 comm.cu:2", "DEP004 conv.cpp:1"],
    }
    assert verdicts["NVIDIA part with less memory"] == {
        "verdict": "rewrite",
        "deciding": ["MEM001 budget.py:2"],
    }


def test_the_findings_ceiling_bounds_the_report_and_says_its_counts_are_lower_bounds():
    report = scan_paths(REPO, limits=ScanLimits(max_findings=5))
    assert len(report.findings) == 5 and report.counts_complete is False
    assert report.skipped == [
        Skipped(
            "requirements.txt",
            "over the findings ceiling (5): later findings not counted, so the counts are "
            "lower bounds",
        )
    ]
    assert scan_paths(REPO).counts_complete is True
