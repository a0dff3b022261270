"""Which accelerators each stack, and each feature an answer relies on, runs on: one sourced
table that sizing (a candidate the stack cannot run is rejected, never ranked) and right-sizing
(a candidate on another platform is a move, not a swap) both read.

A stack "runs" where the project itself runs: a platform's plugin or fork (vLLM's TPU, Gaudi and
Neuron plugins, Habana's DeepSpeed and Megatron forks, AMD's Primus Megatron, optimum-tpu) is
another stack, listed in moves.py with what the move costs.

Rows are accelerator families (`platform_of`: NVIDIA by architecture, AMD by CDNA/RDNA
generation, Intel Gaudi and Data Center GPU Max, Google TPU generations, AWS NeuronCore
generations). Each entry says runs / partial (what is missing) / does not run, with the page or
code that says so and its words; every source was read on READ_ON. A combination no source
states is treated as not running: the answer says so rather than assume.
"""

from dataclasses import dataclass
from enum import StrEnum

from advisor.domain.compatibility.platforms import (
    AMD_INSTINCT,
    GAUDI_2_3,
    PLATFORM_NAMES,
    nvidia_from,
)
from advisor.domain.compatibility.sources import (
    AUTOMODEL_INSTALL,
    BITSANDBYTES,
    DEEPSPEED_README,
    FLASH_ATTENTION,
    GAUDI_FP8,
    GPT_OSS_RECIPE,
    HF_GAUDI,
    MEGATRON,
    MEGATRON_ROCM,
    OPTIMUM_TPU,
    PEFT_README,
    PYTORCH_FSDP2,
    READ_ON,
    ROCM_PEFT,
    ROCM_QLORA,
    SGLANG_ROCM,
    SGLANG_RUNNER,
    SGLANG_TPU,
    TORCH_NEURON_INF1,
    TORCH_XLA_FSDP,
    TORCHTUNE_DEVICES,
    TORCHTUNE_STOPPED,
    TRTLLM_HARDWARE,
    TRTLLM_MATRIX,
    TRTLLM_UNLISTED,
    UNSLOTH_AMD,
    UNSLOTH_INTEL,
    UNSLOTH_NVIDIA,
    V520_ROCM,
    VLLM_ARCHS,
    VLLM_CUDA,
    VLLM_MXFP4,
    VLLM_QUANTIZATION,
    VLLM_ROCM,
    VLLM_TPU,
    VLLM_XPU,
    Source,
)


class Support(StrEnum):
    RUNS = "runs"
    PARTIAL = "partial"  # runs, without something the entry names
    NO = "does not run"


@dataclass(frozen=True)
class Entry:
    support: Support
    note: str  # what is missing (partial), or why not
    sources: tuple[Source, ...]

    @property
    def runs(self) -> bool:
        return self.support is not Support.NO


def _runs(*sources: Source, note: str = "") -> Entry:
    return Entry(Support.RUNS, note, sources)


def _partial(note: str, *sources: Source) -> Entry:
    return Entry(Support.PARTIAL, note, sources)


# Subjects: the stacks (stacks.STACKS names) and the features an answer relies on.
BITSANDBYTES_4BIT = "bitsandbytes_4bit"
BITSANDBYTES_8BIT_OPTIMIZER = "bitsandbytes_8bit_optimizer"
FLASH_ATTENTION_2 = "flash_attention"
FP8_KERNELS = "fp8"
MXFP4_KERNELS = "mxfp4"

SUBJECT_LABELS = {
    "vllm": "vLLM",
    "sglang": "SGLang",
    "tensorrt_llm": "TensorRT-LLM",
    "hf_peft": "Hugging Face Transformers + PEFT",
    "torchtune": "torchtune",
    "unsloth": "Unsloth",
    "fsdp2": "PyTorch FSDP2",
    "deepspeed_zero": "DeepSpeed ZeRO",
    "megatron": "Megatron-LM",
    "nemo_automodel": "NVIDIA NeMo Automodel",
    BITSANDBYTES_4BIT: "bitsandbytes 4-bit",
    BITSANDBYTES_8BIT_OPTIMIZER: "bitsandbytes 8-bit and paged optimizers",
    FLASH_ATTENTION_2: "FlashAttention-2",
    FP8_KERNELS: "fp8 kernels",
    MXFP4_KERNELS: "MXFP4 kernels",
}

TABLE: dict[str, tuple[tuple[frozenset[str], Entry], ...]] = {
    "vllm": (
        (nvidia_from(7.5), _runs(VLLM_CUDA, VLLM_ARCHS)),
        (
            frozenset({"nvidia-volta"}),
            _partial(
                "only a source build with CUDA older than 12.8: the released wheels start at "
                "compute capability 7.5",
                VLLM_ARCHS,
            ),
        ),
        (AMD_INSTINCT, _runs(VLLM_ROCM)),
        (frozenset({"intel-xpu"}), _runs(VLLM_XPU)),
    ),
    "sglang": (
        (nvidia_from(7.5), _runs(SGLANG_RUNNER)),
        (frozenset({"amd-cdna3", "amd-cdna4"}), _runs(SGLANG_ROCM)),
    ),
    "tensorrt_llm": ((nvidia_from(8.0), _runs(TRTLLM_HARDWARE, TRTLLM_MATRIX)),),
    "hf_peft": (
        (
            nvidia_from(7.0),
            _runs(
                PEFT_README,
                note="PyTorch libraries with no floor of their own: where PyTorch's CUDA runs",
            ),
        ),
        (AMD_INSTINCT, _runs(ROCM_PEFT)),
    ),
    "torchtune": (
        (
            nvidia_from(7.0),
            _partial("no longer actively developed", TORCHTUNE_DEVICES, TORCHTUNE_STOPPED),
        ),
        (
            AMD_INSTINCT,
            _partial("through PyTorch's cuda device on ROCm; no ROCm page", TORCHTUNE_DEVICES),
        ),
        (
            frozenset({"intel-xpu"}),
            _partial("XPU device; no longer actively developed", TORCHTUNE_DEVICES),
        ),
    ),
    "unsloth": (
        (nvidia_from(7.0), _runs(UNSLOTH_NVIDIA)),
        (frozenset({"amd-cdna3"}), _runs(UNSLOTH_AMD)),
        (frozenset({"intel-xpu"}), _runs(UNSLOTH_INTEL)),
    ),
    "fsdp2": (
        (
            nvidia_from(7.0),
            _runs(PYTORCH_FSDP2, note="PyTorch core: runs where its CUDA build and NCCL run"),
        ),
        (AMD_INSTINCT, _runs(PYTORCH_FSDP2, note="PyTorch core on ROCm, with RCCL")),
    ),
    "deepspeed_zero": (
        (nvidia_from(6.0), _runs(DEEPSPEED_README)),
        (frozenset({"amd-cdna1", "amd-cdna2", "amd-cdna3", "amd-cdna4"}), _runs(DEEPSPEED_README)),
        (frozenset({"intel-xpu"}), _runs(DEEPSPEED_README)),
    ),
    "megatron": ((nvidia_from(7.5), _runs(MEGATRON)),),
    "nemo_automodel": (
        (
            nvidia_from(7.0),
            _runs(AUTOMODEL_INSTALL, note="PyTorch FSDP2 on NVIDIA GPUs, no floor of its own"),
        ),
    ),
    BITSANDBYTES_4BIT: (
        (nvidia_from(6.0), _runs(BITSANDBYTES)),
        (AMD_INSTINCT, _runs(BITSANDBYTES, ROCM_QLORA)),
        (
            GAUDI_2_3 | {"intel-xpu"},
            _partial("platform support only: no per-feature status", BITSANDBYTES),
        ),
    ),
    BITSANDBYTES_8BIT_OPTIMIZER: (
        (nvidia_from(6.0), _runs(BITSANDBYTES)),
        (
            AMD_INSTINCT | GAUDI_2_3 | {"intel-xpu"},
            _partial("platform support only: no per-feature status", BITSANDBYTES),
        ),
    ),
    FLASH_ATTENTION_2: (
        (nvidia_from(8.0, 9.0), _runs(FLASH_ATTENTION)),
        (AMD_INSTINCT, _runs(FLASH_ATTENTION)),
    ),
    FP8_KERNELS: (
        (nvidia_from(8.9), _runs(VLLM_QUANTIZATION, TRTLLM_MATRIX)),
        (
            frozenset({"nvidia-ampere"}),
            _partial("weight-only fp8 (Marlin): memory saved, no fp8 compute", VLLM_QUANTIZATION),
        ),
        (frozenset({"amd-cdna3", "amd-cdna4"}), _runs(VLLM_QUANTIZATION)),
        (GAUDI_2_3, _runs(GAUDI_FP8)),
    ),
    MXFP4_KERNELS: (
        (nvidia_from(8.0), _runs(VLLM_MXFP4, GPT_OSS_RECIPE)),
        (frozenset({"amd-cdna3", "amd-cdna4"}), _runs(VLLM_MXFP4, GPT_OSS_RECIPE)),
    ),
}

# What each subject's project says it runs on, cited when a family is absent from its rows.
PROJECT_SOURCES = {
    "vllm": (VLLM_CUDA, VLLM_ROCM, VLLM_TPU),
    "sglang": (SGLANG_RUNNER, SGLANG_TPU),
    "tensorrt_llm": (TRTLLM_HARDWARE, TRTLLM_UNLISTED),
    "hf_peft": (PEFT_README, ROCM_PEFT, HF_GAUDI, OPTIMUM_TPU),
    "torchtune": (TORCHTUNE_DEVICES,),
    "unsloth": (UNSLOTH_NVIDIA, UNSLOTH_AMD, UNSLOTH_INTEL),
    "fsdp2": (PYTORCH_FSDP2, TORCH_XLA_FSDP),
    "deepspeed_zero": (DEEPSPEED_README,),
    "megatron": (MEGATRON, MEGATRON_ROCM),
    "nemo_automodel": (AUTOMODEL_INSTALL,),
    BITSANDBYTES_4BIT: (BITSANDBYTES,),
    BITSANDBYTES_8BIT_OPTIMIZER: (BITSANDBYTES,),
    FLASH_ATTENTION_2: (FLASH_ATTENTION,),
    FP8_KERNELS: (VLLM_QUANTIZATION,),
    MXFP4_KERNELS: (VLLM_MXFP4,),
}
# Families nothing in the table runs on, and why (shown in every reason for them).
NOTHING_RUNS = {
    "aws-inf1": Entry(
        Support.NO, "no current LLM stack: torch-neuron is archived", (TORCH_NEURON_INF1,)
    ),
    "amd-rdna1": Entry(
        Support.NO, "no stack lists it and ROCm's rocBLAS does not support it", (V520_ROCM,)
    ),
}


def support(subject: str, platform: str) -> Entry:
    """Whether `subject` (a stack name or a feature) runs on the accelerator family."""
    for families, entry in TABLE[subject]:
        if platform in families:
            return entry
    if platform in NOTHING_RUNS:
        return NOTHING_RUNS[platform]
    return Entry(
        Support.NO,
        f"not among the accelerators {SUBJECT_LABELS[subject]} lists",
        PROJECT_SOURCES[subject],
    )


def not_running_reason(subject: str, platform: str, gpu_name: str) -> str | None:
    """Why `subject` does not run on this GPU, in the answer's words; None when it runs."""
    entry = support(subject, platform)
    if entry.runs:
        return None
    where = f"{gpu_name} ({PLATFORM_NAMES[platform]})"
    return f"{SUBJECT_LABELS[subject]} does not run on {where}: {entry.note}"


def partial_warning(subject: str, platform: str, gpu_name: str) -> str | None:
    """What a partial entry leaves out, as a candidate's warning; None otherwise."""
    entry = support(subject, platform)
    if entry.support is not Support.PARTIAL:
        return None
    return f"{SUBJECT_LABELS[subject]} on {gpu_name}: {entry.note}"


def table_rows() -> list[dict]:
    """The table as data: per subject and family, the support, the note and the sources."""
    rows = []
    for subject in TABLE:
        for platform in PLATFORM_NAMES:
            if platform == "unknown":
                continue
            entry = support(subject, platform)
            rows.append(
                {
                    "subject": subject,
                    "label": SUBJECT_LABELS[subject],
                    "platform": platform,
                    "platform_name": PLATFORM_NAMES[platform],
                    "support": str(entry.support),
                    "note": entry.note,
                    "sources": [{"url": s.url, "quote": s.quote} for s in entry.sources],
                    "read_on": READ_ON,
                }
            )
    return rows
