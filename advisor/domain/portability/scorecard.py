"""The scorecard of the four questions and a verdict per target: the shape both a code scan's
report and the questionnaire's answer share. A row is {question_id, question, answer,
evidence}: keyed by the question's id (questions.py), with its wording for display.

A code scan's scorecard. Each question has locked evidence (findings) and portable evidence
(findings of portable-intent APIs, or portable forms seen in code); the answer is "locked" when
only locked evidence exists, "portable" when only portable, "mixed" when both, "no evidence"
when neither.

    question id     locked evidence                 portable evidence
    matmuls         TC001 TC002 TC003 TC005 TC006   TC004 (CUTLASS); GEMM library calls
                                                    (cuBLAS, hipBLAS, rocBLAS, torch.matmul,
                                                    nn.Linear, SDPA)
    precision       PREC001 literal,                PREC002, PREC001 from config,
                    PREC003 compile-time,           PREC003 runtime-selected,
                    PREC004, PREC005                autocast, is_bf16_supported
    collectives     COMM001, COMM002 outside        COMM002 inside a declared layer,
                    a layer, COMM003, COMM005,      torch.distributed collectives,
                    COMM006                         deepspeed.comm,
                                                    get_default_backend_for_device
    memory_sizes    MEM001-MEM006                   mem_get_info, device properties,
                                                    cudaMemGetInfo, hipMemGetInfo,
                                                    find_executable_batch_size

A code scan's verdicts: "rewrite" when a finding decides one on that target (decisions.DECISIONS),
with those findings; otherwise "re-tune", with the re-tune findings that matter there (at most
25 either way). Findings inside a declared abstraction layer are already re-tune (the scanner
demotes them), so they never decide a rewrite by severity.

Plain Python over two protocols, so the code scanner (jobs -> advisor) hands in its own
findings and evidence.
"""

from collections.abc import Callable, Sequence
from itertools import islice
from typing import Protocol

from advisor.domain.portability.decisions import DECISIONS
from advisor.domain.portability.questions import (
    LOCKED,
    MIXED,
    NO_EVIDENCE,
    PORTABLE,
    QUESTIONS,
    TARGET_NAMES,
    QuestionId,
    Target,
)
from advisor.domain.portability.rules import INFO, RE_TUNE, REWRITE_RISK

REWRITE = "rewrite"


class FindingFacts(Protocol):
    @property
    def rule_id(self) -> str: ...
    @property
    def category(self) -> str: ...
    @property
    def severity(self) -> str: ...


class Judged(Protocol):
    """A finding with what the verdicts need and a finding does not say."""

    @property
    def finding(self) -> FindingFacts: ...
    @property
    def in_layer(self) -> bool: ...
    @property
    def tags(self) -> frozenset[str]: ...
    @property
    def ref(self) -> str: ...  # how rows and verdicts cite it: "RULE file:line"


class PortableForm(Protocol):
    """A portable form seen in code (a library GEMM, a memory query)."""

    @property
    def question(self) -> str: ...  # the category it answers: TC, PREC, COMM or MEM
    @property
    def file(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def label(self) -> str: ...


def scorecard_row(question_id: QuestionId, answer: str, evidence: list[str]) -> dict:
    return {
        "question_id": str(question_id),
        "question": QUESTIONS[question_id].wording,
        "answer": answer,
        "evidence": evidence,
    }


def verdict(rewrite_deciding: list[str], re_tune_deciding: list[str]) -> dict:
    """A target's verdict: a rewrite when anything decides one, with what does."""
    if rewrite_deciding:
        return {"verdict": REWRITE, "deciding": rewrite_deciding}
    return {"verdict": RE_TUNE, "deciding": re_tune_deciding}


MAX_DECIDING = 25
_MAX_EVIDENCE_PER_SIDE = 5

Predicate = Callable[[Judged], bool]


def _rule(*rule_ids: str) -> Predicate:
    return lambda r: r.finding.rule_id in rule_ids


def _locked_precision(r: Judged) -> bool:
    rule_id, severity = r.finding.rule_id, r.finding.severity
    return (
        (rule_id == "PREC001" and severity != INFO)
        or (rule_id == "PREC003" and severity == REWRITE_RISK)
        or rule_id in ("PREC004", "PREC005")
    )


def _portable_precision(r: Judged) -> bool:
    rule_id, severity = r.finding.rule_id, r.finding.severity
    return (
        rule_id == "PREC002"
        or (rule_id == "PREC001" and severity == INFO)
        or (rule_id == "PREC003" and severity == RE_TUNE)
    )


def _locked_collectives(r: Judged) -> bool:
    rule_id = r.finding.rule_id
    return rule_id in ("COMM001", "COMM003", "COMM005", "COMM006") or (
        rule_id == "COMM002" and not r.in_layer
    )


def _portable_collectives(r: Judged) -> bool:
    return r.finding.rule_id == "COMM002" and r.in_layer


# Question -> (locked evidence, portable evidence) among the findings, in QUESTIONS' order.
_EVIDENCE: dict[QuestionId, tuple[Predicate, Predicate]] = {
    QuestionId.MATMULS: (_rule("TC001", "TC002", "TC003", "TC005", "TC006"), _rule("TC004")),
    QuestionId.PRECISION: (_locked_precision, _portable_precision),
    QuestionId.COLLECTIVES: (_locked_collectives, _portable_collectives),
    QuestionId.MEMORY_SIZES: (
        lambda r: r.finding.category == "MEM",
        lambda r: False,  # only queries seen in code (evidence) are portable memory sizes
    ),
}


def _refs(resolved: Sequence[Judged], predicate: Predicate, limit: int) -> list[str]:
    """The first `limit` findings that match, cited as "RULE file:line"."""
    return list(islice((r.ref for r in resolved if predicate(r)), limit))


def build_scorecard(resolved: Sequence[Judged], evidence: Sequence[PortableForm]) -> list[dict]:
    scorecard = []
    for question in QUESTIONS.values():
        is_locked, is_portable = _EVIDENCE[question.id]
        locked = _refs(resolved, is_locked, _MAX_EVIDENCE_PER_SIDE)
        portable = _refs(resolved, is_portable, _MAX_EVIDENCE_PER_SIDE)
        portable += [
            f"{e.file}:{e.line} {e.label}" for e in evidence if e.question == question.category
        ]
        if locked and portable:
            answer = MIXED
        elif locked:
            answer = LOCKED
        elif portable:
            answer = PORTABLE
        else:
            answer = NO_EVIDENCE
        shown = locked[:_MAX_EVIDENCE_PER_SIDE] + portable[:_MAX_EVIDENCE_PER_SIDE]
        scorecard.append(scorecard_row(question.id, answer, shown))
    return scorecard


def _rewrites_on(target: Target) -> Predicate:
    def rewrites(r: Judged) -> bool:
        decision = DECISIONS[r.finding.rule_id][target]
        return decision.rewrites(severity=r.finding.severity, in_layer=r.in_layer, tags=r.tags)

    return rewrites


def _decides_re_tune_on(target: Target) -> Predicate:
    def decides(r: Judged) -> bool:
        decision = DECISIONS[r.finding.rule_id][target]
        return r.finding.severity == RE_TUNE and decision.decides_re_tune

    return decides


def build_verdicts(resolved: Sequence[Judged]) -> dict[str, dict]:
    verdicts = {}
    for target in Target:
        deciding = _refs(resolved, _rewrites_on(target), MAX_DECIDING)
        re_tunes = [] if deciding else _refs(resolved, _decides_re_tune_on(target), MAX_DECIDING)
        verdicts[TARGET_NAMES[target]] = verdict(deciding, re_tunes)
    return verdicts
