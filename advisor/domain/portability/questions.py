"""The four portability questions and the targets a move is judged for: the one place their
ids, wording and answer choices are written.

A question's id is its stable key: the questionnaire's field name, and the `question_id` of a
scorecard row, so a code scan's scorecard and the questionnaire's can be matched row by row.
The wording is the catalogue's (shared/portability_rules.md) and is only ever displayed.
"""

from dataclasses import dataclass
from enum import StrEnum

# What a scorecard row answers, from the evidence (code scan) or from what a team says.
PORTABLE = "portable"
LOCKED = "locked"
MIXED = "mixed"
NO_EVIDENCE = "no evidence"


class QuestionId(StrEnum):
    MATMULS = "matmuls"
    PRECISION = "precision"
    COLLECTIVES = "collectives"
    MEMORY_SIZES = "memory_sizes"


# "Don't know" is an answer to every question, judged as its cautious case and said so.
DONT_KNOW = "dont_know"


class Matmuls(StrEnum):
    LIBRARY = "library"  # cuBLAS / hipBLASLt / torch.matmul / CUTLASS templates via a config
    HAND_TILED = "hand_tiled"
    MIXED = "mixed"
    DONT_KNOW = DONT_KNOW


class Precision(StrEnum):
    RUNTIME_POLICY = "runtime_policy"
    COMPILE_TIME = "compile_time"
    MIXED = "mixed"
    DONT_KNOW = DONT_KNOW


class Collectives(StrEnum):
    ABSTRACTION = "abstraction"  # torch.distributed default backend, deepspeed.comm, ...
    NCCL_DIRECT = "nccl_direct"
    NVLINK_SPECIFIC = "nvlink_specific"
    NONE = "none"
    DONT_KNOW = DONT_KNOW


class MemorySizes(StrEnum):
    QUERIED = "queried"
    HARD_CODED = "hard_coded"
    MIXED = "mixed"
    DONT_KNOW = DONT_KNOW


@dataclass(frozen=True)
class Choice:
    value: StrEnum
    label: str  # how the page words it
    reads_as: str  # the scorecard answer it gives: PORTABLE, LOCKED, MIXED or NO_EVIDENCE


@dataclass(frozen=True)
class Question:
    id: QuestionId
    category: str  # the catalogue category whose findings answer it: TC, PREC, COMM or MEM
    wording: str
    choices: tuple[Choice, ...]

    def reads_as(self, value: StrEnum) -> str:
        return next(choice.reads_as for choice in self.choices if choice.value == value)

    def label_of(self, value: StrEnum) -> str:
        """The answer in the page's words."""
        return next(choice.label for choice in self.choices if choice.value == value)


# In the catalogue's order, which is the order of every scorecard's rows.
QUESTIONS: dict[QuestionId, Question] = {
    question.id: question
    for question in (
        Question(
            QuestionId.MATMULS,
            "TC",
            "Are matmuls going through a library or hand-tiled?",
            (
                Choice(
                    Matmuls.LIBRARY,
                    "a library (cuBLAS, torch.matmul, CUTLASS/CK through a config)",
                    PORTABLE,
                ),
                Choice(
                    Matmuls.HAND_TILED, "hand-tiled (wmma fragments, mma PTX, CuTe atoms)", LOCKED
                ),
                Choice(Matmuls.MIXED, "some of each", MIXED),
                Choice(Matmuls.DONT_KNOW, "don't know (judged as hand-tiled)", LOCKED),
            ),
        ),
        Question(
            QuestionId.PRECISION,
            "PREC",
            "Is precision a runtime policy or a compile-time constant?",
            (
                Choice(
                    Precision.RUNTIME_POLICY, "a runtime policy (set from configuration)", PORTABLE
                ),
                Choice(
                    Precision.COMPILE_TIME,
                    "compiled in (TF32 types, constants, thresholds)",
                    LOCKED,
                ),
                Choice(Precision.MIXED, "some of each", MIXED),
                Choice(Precision.DONT_KNOW, "don't know (judged as compiled in)", LOCKED),
            ),
        ),
        Question(
            QuestionId.COLLECTIVES,
            "COMM",
            "Do collectives go through an abstraction?",
            (
                Choice(
                    Collectives.ABSTRACTION,
                    "yes (torch.distributed default backend, deepspeed.comm)",
                    PORTABLE,
                ),
                Choice(Collectives.NCCL_DIRECT, "we call NCCL directly", LOCKED),
                Choice(
                    Collectives.NVLINK_SPECIFIC,
                    "our algorithms assume NVLink/NVSwitch (multicast, P2P)",
                    LOCKED,
                ),
                Choice(Collectives.NONE, "we run on one GPU", NO_EVIDENCE),
                Choice(
                    Collectives.DONT_KNOW, "don't know (judged as assuming NVLink/NVSwitch)", LOCKED
                ),
            ),
        ),
        Question(
            QuestionId.MEMORY_SIZES,
            "MEM",
            "Are memory sizes derived from a query or hard-coded?",
            (
                Choice(MemorySizes.QUERIED, "queried (mem_get_info, device properties)", PORTABLE),
                Choice(MemorySizes.HARD_CODED, "hard-coded (80 GB, A100 peaks, SM counts)", LOCKED),
                Choice(MemorySizes.MIXED, "some of each", MIXED),
                Choice(MemorySizes.DONT_KNOW, "don't know (judged as hard-coded)", LOCKED),
            ),
        ),
    )
}

# What the stack uses: the questionnaire asks these beside the four questions.
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
# How the page words each choice (the API takes the values).
CHOICE_LABELS = {
    "pytorch": "PyTorch",
    "jax": "JAX",
    "tensorflow": "TensorFlow",
    "triton": "Triton",
    "cuda_cpp": "CUDA C++",
    "cutlass": "CUTLASS",
    "flash_attn": "FlashAttention",
    "deepspeed": "DeepSpeed",
    "megatron": "Megatron-LM",
    "vllm": "vLLM",
    "tensorrt": "TensorRT",
    "bitsandbytes": "bitsandbytes",
    "xformers": "xFormers",
    "nccl": "NCCL",
    "rccl": "RCCL",
    "oneccl": "oneCCL",
    "gloo": "Gloo",
    "mpi": "MPI",
    "nvshmem": "NVSHMEM",
    "fp32": "FP32",
    "tf32": "TF32",
    "bf16": "BF16",
    "fp16": "FP16",
    "fp8": "FP8",
}


class Target(StrEnum):
    AMD_ROCM = "amd_rocm"
    INTEL_ONEAPI = "intel_oneapi"
    NVIDIA_SMALLER = "nvidia_smaller"
    GOOGLE_TPU = "google_tpu"
    AWS_TRAINIUM = "aws_trainium"
    INTEL_GAUDI = "intel_gaudi"


# How reports name each target: the keys of every report's verdicts.
TARGET_NAMES = {
    Target.AMD_ROCM: "AMD ROCm",
    Target.INTEL_ONEAPI: "Intel oneAPI",
    Target.NVIDIA_SMALLER: "NVIDIA part with less memory",
    Target.GOOGLE_TPU: "Google TPU (XLA)",
    Target.AWS_TRAINIUM: "AWS Trainium (Neuron)",
    Target.INTEL_GAUDI: "Intel Gaudi",
}
