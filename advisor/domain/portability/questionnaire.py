"""A team's own answers to the four portability questions -> scorecard, verdicts, first steps.

The same shape as a code scan's report (scorecard.py: rows keyed by question id, a verdict per
target: re-tune or rewrite, with what decides it), built from what the team says instead of
from their code. The answers say which facts of decisions.STACK_FACTS hold; what each fact
decides on each target is the rules' (decisions.DECISIONS), as for a scan's findings.
"""

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from enum import StrEnum

from advisor.domain.portability.decisions import STACK_FACTS, Fact
from advisor.domain.portability.questions import (
    CHOICE_LABELS,
    PORTABLE,
    QUESTIONS,
    TARGET_NAMES,
    Collectives,
    Matmuls,
    MemorySizes,
    Precision,
    QuestionId,
    Target,
)
from advisor.domain.portability.rules import RE_TUNE, REWRITE_RISK
from advisor.domain.portability.scorecard import scorecard_row, verdict

# The CUDA-only libraries a team may name, each with what stands in for it on other devices.
CUDA_ONLY_FALLBACKS = {
    "flash_attn": "PyTorch SDPA (torch.nn.functional.scaled_dot_product_attention)",
    "xformers": "PyTorch SDPA",
    "bitsandbytes": "torchao's int8/int4 weight-only quantisation",
    "tensorrt": "torch.compile or ONNX Runtime with the device's execution provider",
}

NOTHING_LOCKS = "nothing locks the algorithm to one device: re-measure and change settings"


@dataclass(frozen=True)
class Answers:
    # One field per question, named by its id.
    matmuls: Matmuls
    precision: Precision
    collectives: Collectives
    memory_sizes: MemorySizes
    frameworks: tuple[str, ...] = ()
    collective_libraries: tuple[str, ...] = ()
    precisions: tuple[str, ...] = ()
    targets: tuple[Target, ...] = tuple(Target)

    def to(self, question_id: QuestionId) -> StrEnum:
        """The answer to one of the four questions."""
        return getattr(self, question_id)


@dataclass(frozen=True)
class Step:
    category: str  # the catalogue's category id: TC, PREC, COMM, MEM, DEP
    change: str
    alternative: str
    severity: str  # rewrite-risk or re-tune: what staying as is costs


@dataclass
class QuestionnaireReport:
    scorecard: list[dict]
    verdicts: dict[str, dict]
    first_steps: list[Step] = field(default_factory=list)
    portable: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "scorecard": self.scorecard,
            "verdicts": self.verdicts,
            "first_steps": [asdict(step) for step in self.first_steps],
            "portable": self.portable,
        }


def scorecard(answers: Answers) -> list[dict]:
    return [
        scorecard_row(
            question.id,
            question.reads_as(answers.to(question.id)),
            [f"you said: {question.label_of(answers.to(question.id))}"],
        )
        for question in QUESTIONS.values()
    ]


# Which facts of the stack the answers state.
_STATES: dict[Fact, Callable[[Answers], bool]] = {
    # A "don't know" states the cautious fact: the one that could make the move a rewrite.
    Fact.HAND_TILED_MATMULS: lambda a: (
        a.matmuls in {Matmuls.HAND_TILED, Matmuls.MIXED, Matmuls.DONT_KNOW}
    ),
    Fact.COMPILE_TIME_TF32: lambda a: (
        a.precision in {Precision.COMPILE_TIME, Precision.MIXED, Precision.DONT_KNOW}
        and "tf32" in a.precisions
    ),
    Fact.NVLINK_COLLECTIVES: lambda a: (
        a.collectives in {Collectives.NVLINK_SPECIFIC, Collectives.DONT_KNOW}
    ),
    Fact.DIRECT_NCCL: lambda a: (
        a.collectives is Collectives.NCCL_DIRECT
        or ("nccl" in a.collective_libraries and a.collectives is not Collectives.ABSTRACTION)
    ),
    Fact.CUTLASS_KERNELS: lambda a: "cutlass" in a.frameworks,
    Fact.CUDA_CPP_KERNELS: lambda a: "cuda_cpp" in a.frameworks,
    Fact.TENSORRT: lambda a: "tensorrt" in a.frameworks,
    Fact.FP8: lambda a: "fp8" in a.precisions,
    Fact.HARD_CODED_MEMORY: lambda a: (
        a.memory_sizes in {MemorySizes.HARD_CODED, MemorySizes.MIXED, MemorySizes.DONT_KNOW}
    ),
}


def _deciding(answers: Answers, target: Target) -> list[str]:
    """What makes the move a rewrite for this target (empty: a re-tune)."""
    return [
        fact.why
        for name, fact in STACK_FACTS.items()
        if _STATES[name](answers) and fact.rewrites_on(target)
    ]


def first_steps(answers: Answers) -> list[Step]:
    steps = []
    if answers.matmuls is not Matmuls.LIBRARY:
        steps.append(
            Step(
                "TC",
                "route matmuls through a GEMM library",
                "cuBLAS/hipBLASLt or CUTLASS/CK behind a per-device traits file",
                REWRITE_RISK,
            )
        )
    if answers.collectives is Collectives.NVLINK_SPECIFIC:
        steps.append(
            Step(
                "COMM",
                "keep a ring/tree fallback for NVLink-only collectives",
                "topology queried through the comm library",
                REWRITE_RISK,
            )
        )
    if answers.memory_sizes is not MemorySizes.QUERIED:
        steps.append(
            Step(
                "MEM",
                "query memory instead of hard-coding it",
                "torch.cuda.mem_get_info() / cudaMemGetInfo / hipMemGetInfo",
                REWRITE_RISK,
            )
        )
    if answers.precision is not Precision.RUNTIME_POLICY:
        steps.append(
            Step(
                "PREC",
                "make precision a runtime policy",
                "torch.set_float32_matmul_precision() from configuration",
                RE_TUNE,
            )
        )
    if answers.collectives is Collectives.NCCL_DIRECT:
        steps.append(
            Step(
                "COMM",
                "put collectives behind an abstraction",
                "torch.distributed with the device's default backend",
                RE_TUNE,
            )
        )
    cuda_only = [name for name in CUDA_ONLY_FALLBACKS if name in answers.frameworks]
    if cuda_only:
        steps.append(
            Step(
                "DEP",
                "make "
                + ", ".join(CHOICE_LABELS[name] for name in cuda_only)
                + " optional: "
                + ("it is" if len(cuda_only) == 1 else "they are")
                + " CUDA-only",
                "guarded imports with a portable fallback: "
                + "; ".join(
                    f"{CHOICE_LABELS[name]} -> {CUDA_ONLY_FALLBACKS[name]}" for name in cuda_only
                ),
                RE_TUNE,
            )
        )
    return sorted(steps, key=lambda step: step.severity != REWRITE_RISK)


def answer(answers: Answers) -> QuestionnaireReport:
    card = scorecard(answers)
    verdicts = {
        TARGET_NAMES[target]: verdict(_deciding(answers, target), [NOTHING_LOCKS])
        for target in answers.targets
    }
    portable = [row["question"] for row in card if row["answer"] == PORTABLE]
    return QuestionnaireReport(card, verdicts, first_steps(answers), portable)
