"""Where the chosen stack does not run, another one may: what it is, and what the move costs a
team's code, in the scorecard's words (a re-tune or a rewrite).

A re-tune keeps the team's code and its framework (the same vLLM server with the platform's
plugin, the same Trainer with another device); a rewrite moves the model or the training loop to
another framework (JAX for MaxText). Sizing lists these apart ("with another stack"), and ranks
them only when asked; right-sizing names the move a trace's job would make to another vendor.
"""

from dataclasses import dataclass

from advisor.domain.compatibility.sources import (
    DEEPSPEED_GAUDI,
    DEEPSPEED_README,
    GAUDI_FSDP,
    HF_GAUDI,
    MAXTEXT,
    MEGATRON_GAUDI,
    MEGATRON_ROCM,
    NEURON_HF,
    NXD_INFERENCE,
    OPTIMUM_TPU,
    ROCM_PEFT,
    SGLANG_TPU,
    TORCH_NEURON,
    TORCH_XLA_FSDP,
    VLLM_GAUDI,
    VLLM_NEURON,
    VLLM_ROCM,
    VLLM_TPU,
    Source,
)
from advisor.domain.portability.rule import RE_TUNE

REWRITE = "rewrite"  # a scorecard verdict (scorecard.build_verdicts), not a finding severity

SERVING, FINE_TUNING, PRE_TRAINING = "serving", "fine-tuning", "pre-training"


@dataclass(frozen=True)
class StackMove:
    stack: str  # how the answer names it
    platforms: frozenset[str]  # compatibility.platform_of families it runs on
    work: frozenset[str]  # SERVING, FINE_TUNING, PRE_TRAINING
    move: str  # RE_TUNE or REWRITE
    why: str
    sources: tuple[Source, ...]
    # The modelled stack (stacks.STACKS) whose memory rules stand in when it is sized.
    sized_as: str
    # Features of the chosen workload it does not run (say so, and do not size it then).
    lacks: frozenset[str] = frozenset()


TPU_SERVING = frozenset({"tpu-v5e", "tpu-v6e"})
TPU_TRAINING = frozenset({"tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e"})
GAUDI = frozenset({"intel-gaudi2", "intel-gaudi3"})
AMD = frozenset({"amd-cdna2", "amd-cdna3", "amd-cdna4"})

MOVES: tuple[StackMove, ...] = (
    StackMove(
        "vLLM with its TPU plugin (tpu-inference)",
        TPU_SERVING,
        frozenset({SERVING}),
        RE_TUNE,
        "an OpenAI-compatible vLLM server: serving settings are redone, the model and the "
        "clients stay; the plugin brings the TPU kernels and compiles each shape once",
        (VLLM_TPU,),
        "vllm",
    ),
    StackMove(
        "vLLM with the vllm-gaudi plugin",
        GAUDI,
        frozenset({SERVING}),
        RE_TUNE,
        "an OpenAI-compatible vLLM server on Habana's plugin: serving settings are redone, the "
        "model and the clients stay",
        (VLLM_GAUDI,),
        "vllm",
    ),
    StackMove(
        "vLLM with the Neuron plugin (beta)",
        frozenset({"aws-neuron3"}),
        frozenset({SERVING}),
        RE_TUNE,
        "an OpenAI-compatible vLLM server; the model compiles ahead of time for fixed shapes",
        (VLLM_NEURON,),
        "vllm",
    ),
    StackMove(
        "vLLM with NxD Inference (maintenance mode)",
        frozenset({"aws-neuron2"}),
        frozenset({SERVING}),
        RE_TUNE,
        "the vLLM API over Neuron's NxD Inference, which now gets maintenance fixes only",
        (NXD_INFERENCE,),
        "vllm",
    ),
    StackMove(
        "vLLM on ROCm",
        AMD,
        frozenset({SERVING}),
        RE_TUNE,
        "an OpenAI-compatible vLLM server built for ROCm: serving settings are redone, the "
        "model and the clients stay",
        (VLLM_ROCM,),
        "vllm",
    ),
    StackMove(
        "Hugging Face Trainer on Gaudi (hpu)",
        GAUDI,
        frozenset({FINE_TUNING}),
        RE_TUNE,
        "the same Trainer and PEFT code: the device is detected as hpu; CUDA-only kernels are "
        "replaced by Gaudi's",
        (HF_GAUDI,),
        "hf_peft",
    ),
    StackMove(
        "Hugging Face PEFT on ROCm",
        AMD,
        frozenset({FINE_TUNING}),
        RE_TUNE,
        "the same Transformers, PEFT and TRL code on PyTorch's ROCm build",
        (ROCM_PEFT,),
        "hf_peft",
    ),
    StackMove(
        "optimum-tpu",
        frozenset({"tpu-v5e", "tpu-v6e"}),
        frozenset({FINE_TUNING}),
        RE_TUNE,
        "Hugging Face's TPU fine-tuning, on PyTorch/XLA; CUDA kernels do not come along",
        (OPTIMUM_TPU,),
        "hf_peft",
        lacks=frozenset({"bitsandbytes_4bit", "bitsandbytes_8bit_optimizer"}),
    ),
    StackMove(
        "Hugging Face on TorchNeuron (beta)",
        frozenset({"aws-neuron3"}),
        frozenset({FINE_TUNING}),
        RE_TUNE,
        "Transformers and PEFT running natively on TorchNeuron",
        (NEURON_HF,),
        "hf_peft",
        lacks=frozenset({"bitsandbytes_4bit", "bitsandbytes_8bit_optimizer"}),
    ),
    StackMove(
        "PyTorch/XLA SPMD FSDPv2",
        TPU_TRAINING,
        frozenset({PRE_TRAINING}),
        RE_TUNE,
        "the PyTorch model stays; its sharding moves to torch_xla's SPMD FSDPv2",
        (TORCH_XLA_FSDP,),
        "fsdp2",
    ),
    StackMove(
        "MaxText (JAX)",
        TPU_TRAINING,
        frozenset({PRE_TRAINING}),
        REWRITE,
        "the model and the training loop are rewritten in JAX",
        (MAXTEXT,),
        "fsdp2",
    ),
    StackMove(
        "SGLang with its JAX backend",
        frozenset({"tpu-v6e"}),
        frozenset({SERVING}),
        RE_TUNE,
        "an OpenAI-compatible SGLang server on SGLang-JAX: serving settings are redone, the "
        "model and the clients stay",
        (SGLANG_TPU,),
        "sglang",
    ),
    StackMove(
        "DeepSpeed, HabanaAI's fork",
        GAUDI,
        frozenset({PRE_TRAINING, FINE_TUNING}),
        RE_TUNE,
        "the same DeepSpeed configuration and training script on Habana's fork (the public "
        "packages do not install on Gaudi)",
        (DEEPSPEED_README, DEEPSPEED_GAUDI),
        "deepspeed_zero",
    ),
    StackMove(
        "Megatron-LM, Habana's fork",
        GAUDI,
        frozenset({PRE_TRAINING}),
        RE_TUNE,
        "the same Megatron-LM model and arguments on Habana's fork of Megatron-Core",
        (MEGATRON_GAUDI,),
        "megatron",
    ),
    StackMove(
        "Megatron-LM in AMD's Primus images",
        frozenset({"amd-cdna3", "amd-cdna4"}),
        frozenset({PRE_TRAINING}),
        RE_TUNE,
        "the same Megatron-LM model and arguments in AMD's ROCm images",
        (MEGATRON_ROCM,),
        "megatron",
    ),
    StackMove(
        "PyTorch FSDP on Gaudi",
        frozenset({"intel-gaudi2"}),
        frozenset({PRE_TRAINING}),
        RE_TUNE,
        "PyTorch's FSDP on Gaudi 2, as Habana documents it (the FSDP1 API: the sharding "
        "wrapper changes)",
        (GAUDI_FSDP,),
        "fsdp2",
    ),
    StackMove(
        "FSDP2 on TorchNeuron (beta)",
        frozenset({"aws-neuron3"}),
        frozenset({PRE_TRAINING}),
        RE_TUNE,
        "the same FSDP2 code on TorchNeuron (or TorchTitan Neuron)",
        (TORCH_NEURON,),
        "fsdp2",
    ),
)


def work_of(task: str) -> str:
    """What a sizing task is, in the moves' terms."""
    if task == "inference":
        return SERVING
    return PRE_TRAINING if task == "pretrain" else FINE_TUNING


def moves_for(platform: str, task: str) -> list[StackMove]:
    """The other stacks that run this kind of work on the family, re-tunes first."""
    work = work_of(task)
    found = [m for m in MOVES if platform in m.platforms and work in m.work]
    return sorted(found, key=lambda m: m.move != RE_TUNE)
