"""The portability questionnaire: answers in, the scorecard and per-target verdicts out."""

import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from advisor.domain.portability.decisions import DECISIONS, STACK_FACTS, Fact
from advisor.domain.portability.questionnaire import Answers, answer
from advisor.domain.portability.questions import (
    QUESTIONS,
    TARGET_NAMES,
    Collectives,
    Matmuls,
    MemorySizes,
    Precision,
    Target,
)
from advisor.domain.portability.rules import RULES
from advisor.domain.portability.scorecard import build_verdicts
from jobs.domain.codescan import scan_paths

URL = "/api/v1/advice/portability"
ROOT = Path(__file__).resolve().parents[2]
CODESCAN_REPO = ROOT / "tests" / "fixtures" / "codescan" / "repo"
PORTABLE = Answers(
    Matmuls.LIBRARY,
    Precision.RUNTIME_POLICY,
    Collectives.ABSTRACTION,
    MemorySizes.QUERIED,
    frameworks=("pytorch",),
    precisions=("bf16",),
)


def verdict(report, target: str) -> str:
    return report.verdicts[target]["verdict"]


def test_a_portable_stack_is_a_re_tune_everywhere_and_says_so():
    report = answer(PORTABLE)
    assert {v["verdict"] for v in report.verdicts.values()} == {"re-tune"}
    assert [row["answer"] for row in report.scorecard] == ["portable"] * 4
    assert report.first_steps == []


def test_hand_tiled_matmuls_are_a_rewrite_for_every_other_vendor_only():
    report = answer(Answers(**{**PORTABLE.__dict__, "matmuls": Matmuls.HAND_TILED}))
    for target in ("AMD ROCm", "Intel oneAPI", "Google TPU (XLA)", "AWS Trainium (Neuron)"):
        assert verdict(report, target) == "rewrite", target
    assert verdict(report, "Intel Gaudi") == "rewrite"
    assert verdict(report, "NVIDIA part with less memory") == "re-tune"
    assert any("TC" in reason for reason in report.verdicts["AMD ROCm"]["deciding"])
    assert report.first_steps[0].category == "TC"


def test_nccl_called_directly_is_a_re_tune_for_rocm_and_a_rewrite_for_oneapi():
    report = answer(
        Answers(
            **{
                **PORTABLE.__dict__,
                "collectives": Collectives.NCCL_DIRECT,
                "collective_libraries": ("nccl",),
            }
        )
    )
    assert verdict(report, "AMD ROCm") == "re-tune"
    assert verdict(report, "Intel oneAPI") == "rewrite"
    # Gaudi's HCCL imitates NCCL's interface; TPUs and Trainium collect through XLA.
    assert verdict(report, "Intel Gaudi") == "re-tune"
    assert verdict(report, "Google TPU (XLA)") == verdict(report, "AWS Trainium (Neuron)")
    assert verdict(report, "Google TPU (XLA)") == "rewrite"


def test_cuda_cpp_kernels_port_to_amd_and_are_written_again_for_tpu_trainium_and_gaudi():
    report = answer(Answers(**{**PORTABLE.__dict__, "frameworks": ("pytorch", "cuda_cpp")}))
    assert verdict(report, "AMD ROCm") == "re-tune"
    for target in ("Intel oneAPI", "Google TPU (XLA)", "AWS Trainium (Neuron)", "Intel Gaudi"):
        assert verdict(report, target) == "rewrite", target


def test_fp8_is_a_rewrite_where_the_parts_have_none():
    report = answer(Answers(**{**PORTABLE.__dict__, "precisions": ("bf16", "fp8")}))
    assert verdict(report, "Google TPU (XLA)") == "rewrite"  # TPU v2 to v6e: no FP8
    assert verdict(report, "AWS Trainium (Neuron)") == "re-tune"
    assert verdict(report, "Intel Gaudi") == "re-tune"


def test_what_to_change_first_names_the_cuda_only_libraries_the_team_uses():
    report = answer(
        Answers(**{**PORTABLE.__dict__, "frameworks": ("pytorch", "bitsandbytes", "flash_attn")})
    )
    (step,) = [step for step in report.first_steps if step.category == "DEP"]
    assert step.change == "make FlashAttention, bitsandbytes optional: they are CUDA-only"
    assert "FlashAttention -> PyTorch SDPA" in step.alternative
    assert "bitsandbytes -> torchao" in step.alternative
    assert not [s for s in answer(PORTABLE).first_steps if s.category == "DEP"]


def test_hard_coded_memory_sizes_are_a_rewrite_for_a_smaller_nvidia_part():
    report = answer(Answers(**{**PORTABLE.__dict__, "memory_sizes": MemorySizes.HARD_CODED}))
    assert verdict(report, "NVIDIA part with less memory") == "rewrite"
    assert verdict(report, "AMD ROCm") == "re-tune"
    assert report.scorecard[3]["answer"] == "locked"


def test_the_api_answers_with_the_scorecard_shape_and_first_steps():
    body = (
        APIClient()
        .post(
            URL,
            {
                "matmuls": "mixed",
                "precision": "compile_time",
                "collectives": "nvlink_specific",
                "memory_sizes": "hard_coded",
                "frameworks": ["pytorch", "flash_attn"],
                "precisions": ["tf32", "bf16"],
                "targets": ["amd_rocm"],
            },
            format="json",
        )
        .json()
    )
    assert [row["answer"] for row in body["scorecard"]] == ["mixed", "locked", "locked", "locked"]
    assert [row["question_id"] for row in body["scorecard"]] == list(QUESTIONS)
    assert [row["question"] for row in body["scorecard"]] == [q.wording for q in QUESTIONS.values()]
    assert list(body["verdicts"]) == ["AMD ROCm"]
    assert body["verdicts"]["AMD ROCm"]["verdict"] == "rewrite"
    assert body["first_steps"][0]["severity"] == "rewrite-risk"
    assert all(step["alternative"] for step in body["first_steps"])


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        (
            {"precision": "runtime_policy", "collectives": "none", "memory_sizes": "queried"},
            "matmuls",
        ),
        (
            {
                "matmuls": "magic",
                "precision": "runtime_policy",
                "collectives": "none",
                "memory_sizes": "queried",
            },
            "matmuls",
        ),
        (
            {
                "matmuls": "library",
                "precision": "runtime_policy",
                "collectives": "none",
                "memory_sizes": "queried",
                "targets": ["mars"],
            },
            "targets",
        ),
        (
            {
                "matmuls": "library",
                "precision": "runtime_policy",
                "collectives": "none",
                "memory_sizes": "queried",
                "frameworks": ["cobol"],
            },
            "frameworks",
        ),
    ],
)
def test_bad_answers_are_400_naming_the_field(payload, field):
    response = APIClient().post(URL, payload, format="json")
    assert response.status_code == 400 and field in response.json()


HAND_TILED_ON_THE_PAGE = {
    "matmuls": "hand_tiled",
    "precision": "runtime_policy",
    "collectives": "abstraction",
    "memory_sizes": "queried",
}


def test_the_questionnaire_page_shows_verdicts_and_keeps_the_answers(client):
    page = client.get(
        "/portability/", {**HAND_TILED_ON_THE_PAGE, "targets": ["amd_rocm", "nvidia_smaller"]}
    )
    html = page.content.decode()
    assert page.status_code == 200
    assert 'id="verdicts"' in html and "verdict-rewrite" in html
    assert 'value="hand_tiled" required checked' in html
    for question in QUESTIONS.values():
        assert f"<legend>{question.wording}</legend>" in html
        assert f'<tr data-question-id="{question.id}">' in html


def test_the_questionnaire_reads_in_words_not_enum_values(client):
    page = client.get(
        "/portability/", {**HAND_TILED_ON_THE_PAGE, "frameworks": ["cuda_cpp", "flash_attn"]}
    )
    html = page.content.decode()
    assert 'value="cuda_cpp" checked> CUDA C++' in html
    assert "> FlashAttention</label>" in html and "> TensorRT</label>" in html
    assert "you said: runtime_policy" not in html
    said = QUESTIONS["precision"].label_of("runtime_policy")
    assert f"you said: {said}" in html


def test_the_questionnaire_page_reports_bad_input_as_400(client):
    page = client.get("/portability/", {"matmuls": "magic"})
    assert page.status_code == 400 and "form-errors" in page.content.decode()


def test_the_questionnaire_and_a_code_scan_have_scorecard_rows_of_the_same_ids_in_order():
    """Before, rows were keyed by their wording alone, which differed between the two (so
    they could not be matched): now both carry the question's id, in the catalogue's order."""
    from_answers = answer(PORTABLE).scorecard
    from_code = scan_paths(CODESCAN_REPO).scorecard
    assert [row["question_id"] for row in from_answers] == list(QUESTIONS)
    assert [row["question_id"] for row in from_code] == list(QUESTIONS)
    assert [row["question"] for row in from_answers] == [row["question"] for row in from_code]
    assert [set(row) for row in from_answers] == [set(row) for row in from_code]


def _source_texts():
    """The repository's .py and .html files, tests and dot-folders (.venv, .git) left out."""
    for folder, subfolders, files in os.walk(ROOT):
        subfolders[:] = [
            name
            for name in subfolders
            if not name.startswith(".") and name not in {"tests", "var", "node_modules"}
        ]
        for name in files:
            if name.endswith((".py", ".html")):
                path = Path(folder) / name
                yield path, path.read_text(errors="replace")


def test_each_question_is_worded_once_in_the_source_tree():
    """Before, the four questions were worded in four places (questionnaire, code-scan
    scorecard, page, serializer), two of them differently."""
    texts = list(_source_texts())
    for question in QUESTIONS.values():
        places = [
            (path.relative_to(ROOT), text.count(question.wording))
            for path, text in texts
            if question.wording in text
        ]
        assert places == [(Path("advisor/domain/portability/questions.py"), 1)], question.id


@dataclass(frozen=True)
class _Finding:
    rule_id: str
    category: str
    severity: str


@dataclass(frozen=True)
class _Judged:
    finding: _Finding
    in_layer: bool
    tags: frozenset[str]

    @property
    def ref(self) -> str:
        return f"{self.finding.rule_id} stack:1"


@pytest.mark.parametrize("fact", [fact for fact in Fact if STACK_FACTS[fact].rule_ids])
def test_a_stated_fact_decides_as_a_code_scan_finding_of_its_rules_would(fact):
    """The questionnaire reads the rules' decisions, as the code scan does: no table of its
    own that could drift from them."""
    stated = STACK_FACTS[fact]
    findings = [
        _Judged(
            _Finding(rule_id, RULES[rule_id].category, RULES[rule_id].severity), False, stated.tags
        )
        for rule_id in stated.rule_ids
    ]
    for target in Target:
        name = TARGET_NAMES[target]
        from_code = build_verdicts(findings)[name]["verdict"]
        assert verdict(answer(_stating(fact, target)), name) == from_code, (fact, target)


def _stating(fact: Fact, target: Target) -> Answers:
    """Portable answers, but for the one fact."""
    stated = {
        Fact.HAND_TILED_MATMULS: {"matmuls": Matmuls.HAND_TILED},
        Fact.COMPILE_TIME_TF32: {"precision": Precision.COMPILE_TIME, "precisions": ("tf32",)},
        Fact.NVLINK_COLLECTIVES: {"collectives": Collectives.NVLINK_SPECIFIC},
        Fact.DIRECT_NCCL: {"collectives": Collectives.NCCL_DIRECT},
        Fact.TENSORRT: {"frameworks": ("tensorrt",)},
        Fact.HARD_CODED_MEMORY: {"memory_sizes": MemorySizes.HARD_CODED},
    }[fact]
    return Answers(**{**PORTABLE.__dict__, **stated, "targets": (target,)})


def test_every_rule_has_a_decision_for_every_target():
    assert set(DECISIONS) == set(RULES)
    assert all(set(per_target) == set(Target) for per_target in DECISIONS.values())


def test_dont_know_is_an_answer_judged_as_the_cautious_case_and_said_so():
    body = (
        APIClient()
        .post(
            URL,
            {
                "matmuls": "dont_know",
                "precision": "runtime_policy",
                "collectives": "abstraction",
                "memory_sizes": "dont_know",
                "targets": ["amd_rocm", "nvidia_smaller"],
            },
            format="json",
        )
        .json()
    )
    answers = [row["answer"] for row in body["scorecard"]]
    assert answers == ["locked", "portable", "portable", "locked"]
    evidence = body["scorecard"][0]["evidence"]
    assert any("don't know (judged as hand-tiled)" in line for line in evidence)
    # Judged as hand-tiled matmuls and hard-coded memory sizes: rewrites where those are.
    assert body["verdicts"]["AMD ROCm"]["verdict"] == "rewrite"
