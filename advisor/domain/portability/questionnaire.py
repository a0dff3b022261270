"""A team's own answers to the four portability questions -> scorecard, verdicts, first steps.

The same shape as a code scan's report (scorecard of the four questions, a verdict per target:
re-tune or rewrite, with what decides it), built from what the team says instead of from
their code. What makes a move a rewrite, and why:

- hand-tiled tensor-core matmuls (wmma, mma PTX, CuTe atoms): a rewrite for AMD and Intel,
  whose matrix ISA and fragment shapes differ (rocWMMA, wave64); a re-tune on NVIDIA;
- TF32 compiled in (types or constants): a rewrite for AMD (TF32 gated differently) and Intel
  (no TF32 on Xe);
- collectives that assume NVLink/NVSwitch (multicast, P2P IPC): a rewrite for AMD and Intel;
- NCCL called directly: a re-tune for AMD (RCCL is API-compatible), a rewrite for Intel
  (oneCCL is not);
- CUTLASS or hand-written CUDA C++ kernels, TensorRT, reliance on FP8: a rewrite for Intel
  (no SYCL port, no equivalent, no FP8 on Max 1550), re-tunes elsewhere;
- memory sizes hard-coded: a rewrite for a smaller NVIDIA part, where they drive batch and
  buffer sizes; a re-tune elsewhere.

Everything else is a re-tune: a setting or a library choice to re-measure.
"""

from dataclasses import asdict, dataclass, field
from enum import StrEnum


class Matmuls(StrEnum):
    LIBRARY = "library"  # cuBLAS / hipBLASLt / torch.matmul / CUTLASS templates via a config
    HAND_TILED = "hand_tiled"
    MIXED = "mixed"


class Precision(StrEnum):
    RUNTIME_POLICY = "runtime_policy"
    COMPILE_TIME = "compile_time"
    MIXED = "mixed"


class Collectives(StrEnum):
    ABSTRACTION = "abstraction"  # torch.distributed default backend, deepspeed.comm, ...
    NCCL_DIRECT = "nccl_direct"
    NVLINK_SPECIFIC = "nvlink_specific"
    NONE = "none"


class MemorySizes(StrEnum):
    QUERIED = "queried"
    HARD_CODED = "hard_coded"
    MIXED = "mixed"


class Target(StrEnum):
    AMD_ROCM = "amd_rocm"
    INTEL_ONEAPI = "intel_oneapi"
    NVIDIA_SMALLER = "nvidia_smaller"


TARGET_NAMES = {
    Target.AMD_ROCM: "AMD ROCm",
    Target.INTEL_ONEAPI: "Intel oneAPI",
    Target.NVIDIA_SMALLER: "NVIDIA part with less memory",
}
FRAMEWORKS = (
    "pytorch",
    "jax",
    "tensorflow",
    "triton",
    "cuda_cpp",
    "cutlass",
    "flash_attn",
    "deepspeed",
    "megatron",
    "vllm",
    "tensorrt",
    "bitsandbytes",
    "xformers",
)
COLLECTIVE_LIBRARIES = ("nccl", "rccl", "oneccl", "gloo", "mpi", "nvshmem")
PRECISIONS = ("fp32", "tf32", "bf16", "fp16", "fp8")


@dataclass(frozen=True)
class Answers:
    matmuls: Matmuls
    precision: Precision
    collectives: Collectives
    memory_sizes: MemorySizes
    frameworks: tuple[str, ...] = ()
    collective_libraries: tuple[str, ...] = ()
    precisions: tuple[str, ...] = ()
    targets: tuple[Target, ...] = tuple(Target)


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


def _card(question: str, answer: str, evidence: str) -> dict:
    return {"question": question, "answer": answer, "evidence": [evidence]}


def _state(value: StrEnum, portable: StrEnum, locked: tuple[StrEnum, ...]) -> str:
    if value == portable:
        return "portable"
    return "locked" if value in locked else "mixed"


def scorecard(answers: Answers) -> list[dict]:
    collectives = (
        "no evidence"
        if answers.collectives is Collectives.NONE
        else _state(
            answers.collectives,
            Collectives.ABSTRACTION,
            (Collectives.NVLINK_SPECIFIC, Collectives.NCCL_DIRECT),
        )
    )
    return [
        _card(
            "Do matmuls go through a library, or are they hand-tiled?",
            _state(answers.matmuls, Matmuls.LIBRARY, (Matmuls.HAND_TILED,)),
            f"you said: {answers.matmuls}",
        ),
        _card(
            "Is precision a runtime policy or a compile-time constant?",
            _state(answers.precision, Precision.RUNTIME_POLICY, (Precision.COMPILE_TIME,)),
            f"you said: {answers.precision}",
        ),
        {
            **_card(
                "Do collectives go through an abstraction?",
                collectives,
                f"you said: {answers.collectives}",
            )
        },
        _card(
            "Are memory sizes queried from the device or hard-coded?",
            _state(answers.memory_sizes, MemorySizes.QUERIED, (MemorySizes.HARD_CODED,)),
            f"you said: {answers.memory_sizes}",
        ),
    ]


def _deciding(answers: Answers, target: Target) -> list[str]:
    """What makes the move a rewrite for this target (empty: a re-tune)."""
    reasons = []
    hand_tiled = answers.matmuls in {Matmuls.HAND_TILED, Matmuls.MIXED}
    compiled_precision = answers.precision in {Precision.COMPILE_TIME, Precision.MIXED}
    if target in {Target.AMD_ROCM, Target.INTEL_ONEAPI}:
        if hand_tiled:
            reasons.append(
                "hand-tiled tensor-core matmuls (TC): the fragment shapes and ISA differ"
            )
        if compiled_precision and "tf32" in answers.precisions:
            reasons.append("TF32 compiled in (PREC003): not a policy the target can change")
        if answers.collectives is Collectives.NVLINK_SPECIFIC:
            reasons.append("collectives that assume NVLink/NVSwitch (COMM003)")
    if target is Target.INTEL_ONEAPI:
        if answers.collectives is Collectives.NCCL_DIRECT or (
            "nccl" in answers.collective_libraries
            and answers.collectives is not Collectives.ABSTRACTION
        ):
            reasons.append("NCCL called directly (COMM002): oneCCL is not API-compatible")
        for framework, why in (
            ("cutlass", "CUTLASS kernels (TC004): no SYCL port"),
            ("cuda_cpp", "hand-written CUDA C++ kernels: SYCL needs a port"),
            ("tensorrt", "TensorRT (DEP004): no oneAPI equivalent"),
        ):
            if framework in answers.frameworks:
                reasons.append(why)
        if "fp8" in answers.precisions:
            reasons.append("FP8 relied on: Intel Max 1550 has no FP8")
    if target is Target.NVIDIA_SMALLER and answers.memory_sizes in {
        MemorySizes.HARD_CODED,
        MemorySizes.MIXED,
    }:
        reasons.append("memory sizes hard-coded (MEM001): they drive batch and buffer sizes")
    return reasons


def first_steps(answers: Answers) -> list[Step]:
    steps = []
    if answers.matmuls is not Matmuls.LIBRARY:
        steps.append(
            Step(
                "TC",
                "route matmuls through a GEMM library",
                "cuBLAS/hipBLASLt or CUTLASS/CK behind a per-device traits file",
                "rewrite-risk",
            )
        )
    if answers.collectives is Collectives.NVLINK_SPECIFIC:
        steps.append(
            Step(
                "COMM",
                "keep a ring/tree fallback for NVLink-only collectives",
                "topology queried through the comm library",
                "rewrite-risk",
            )
        )
    if answers.memory_sizes is not MemorySizes.QUERIED:
        steps.append(
            Step(
                "MEM",
                "query memory instead of hard-coding it",
                "torch.cuda.mem_get_info() / cudaMemGetInfo / hipMemGetInfo",
                "rewrite-risk",
            )
        )
    if answers.precision is not Precision.RUNTIME_POLICY:
        steps.append(
            Step(
                "PREC",
                "make precision a runtime policy",
                "torch.set_float32_matmul_precision() from configuration",
                "re-tune",
            )
        )
    if answers.collectives is Collectives.NCCL_DIRECT:
        steps.append(
            Step(
                "COMM",
                "put collectives behind an abstraction",
                "torch.distributed with the device's default backend",
                "re-tune",
            )
        )
    if any(f in answers.frameworks for f in ("flash_attn", "xformers", "bitsandbytes")):
        steps.append(
            Step(
                "DEP",
                "make CUDA-only libraries optional",
                "guarded imports with a portable fallback (SDPA, torch norms)",
                "re-tune",
            )
        )
    return sorted(steps, key=lambda step: step.severity != "rewrite-risk")


def answer(answers: Answers) -> QuestionnaireReport:
    card = scorecard(answers)
    verdicts = {}
    for target in answers.targets:
        deciding = _deciding(answers, target)
        verdicts[TARGET_NAMES[target]] = {
            "verdict": "rewrite" if deciding else "re-tune",
            "deciding": deciding
            or ["nothing locks the algorithm to one device: re-measure and change settings"],
        }
    portable = [row["question"] for row in card if row["answer"] == "portable"]
    return QuestionnaireReport(card, verdicts, first_steps(answers), portable)
