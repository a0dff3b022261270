"""The portability questionnaire: answers in, the scorecard and per-target verdicts out."""

import pytest
from rest_framework.test import APIClient

from advisor.domain.portability.questionnaire import (
    Answers,
    Collectives,
    Matmuls,
    MemorySizes,
    Precision,
    answer,
)

URL = "/api/v1/advice/portability"
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


def test_hand_tiled_matmuls_are_a_rewrite_for_amd_and_intel_only():
    report = answer(Answers(**{**PORTABLE.__dict__, "matmuls": Matmuls.HAND_TILED}))
    assert verdict(report, "AMD ROCm") == verdict(report, "Intel oneAPI") == "rewrite"
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


def test_the_questionnaire_page_shows_verdicts_and_keeps_the_answers(client):
    page = client.get(
        "/portability/",
        {
            "matmuls": "hand_tiled",
            "precision": "runtime_policy",
            "collectives": "abstraction",
            "memory_sizes": "queried",
            "targets": ["amd_rocm", "nvidia_smaller"],
        },
    )
    html = page.content.decode()
    assert page.status_code == 200
    assert 'id="verdicts"' in html and "verdict-rewrite" in html
    assert 'value="hand_tiled" required checked' in html


def test_the_questionnaire_page_reports_bad_input_as_400(client):
    page = client.get("/portability/", {"matmuls": "magic"})
    assert page.status_code == 400 and "form-errors" in page.content.decode()
