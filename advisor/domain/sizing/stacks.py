"""Serving and training stacks: each a small table of the behaviour it publishes, which the
memory and speed models read. A stack is not a fork of the engine: it only says how the one
engine's terms apply (what the memory budget is, what is kept for the backward pass, how the
loss is computed, what lives on the CPU).

Every figure carries its source beside it. Task names are the workload's Task values (plain
strings here, so that workload.py can import this module).
"""

from dataclasses import dataclass
from enum import StrEnum

from advisor.domain.provenance import fitted


class Checkpointing(StrEnum):
    """What a layer keeps for the backward pass (Korthikanti et al. 2022, arXiv 2205.05198)."""

    NONE = "none"  # every activation the backward pass reads
    # The attention core (QK^T scores, softmax, dropout on them) is recomputed, everything
    # else is kept: 34·h bytes per token per layer in the paper's GPT, against 34·h + 5·a·s.
    SELECTIVE = "selective"
    FULL = "full"  # each layer's input only; one layer is recomputed at a time


class Budget(StrEnum):
    """How a serving stack turns its memory fraction into a KV-cache pool."""

    # vLLM: fraction × the memory CUDA reports = weights + activation peak + non-torch + KV.
    TOTAL = "total"
    # SGLang: fraction × total = weights + KV ("static"); activations and CUDA graphs live in
    # the rest.
    STATIC = "static"
    # TensorRT-LLM: KV = fraction × what is free once weights, activations and runtime are in.
    FREE = "free"


SERVING = frozenset({"inference"})
FINE_TUNING = frozenset({"lora", "qlora", "full"})
PRE_TRAINING = frozenset({"pretrain"})

GIB = 2**30
# Non-torch memory of a serving stack on GPUs that talk over PCIe only: no NVLink custom
# all-reduce or NVLS buffers, so the CUDA context and NCCL's small buffers. SGLang's log on 4x
# L4 (TP 4, PCIe) shows 21.63 GiB free at start of the ~22.04 GiB CUDA sees: 0.40 GiB (one
# measurement, so low confidence; the NVLink figures, 2.07 GiB, are vLLM's):
# https://github.com/didier-durand/llms-in-clouds/blob/b001c8690e894d234cf3a2e2345d259173acf293/docs/sglang.md
PCIE_NON_TORCH_BYTES = 0.40 * GIB
# The free memory at start is the figure SGLang sizes its pool from and takes the weights' load
# from: both rows of that log saw it.
fitted(
    "PCIE_NON_TORCH_BYTES",
    fitted_on=("sglang-qwq-32b-l4-tp4-kv-tokens", "sglang-qwq-32b-l4-tp4-weights"),
)


@dataclass(frozen=True)
class Stack:
    name: str
    label: str
    tasks: frozenset[str]
    # Training: the granularity its recipes checkpoint at when checkpointing is on.
    checkpointing: Checkpointing = Checkpointing.FULL
    # Training: the share of the forward's matmul FLOPs its selective checkpointing runs again
    # (0: selective recomputes only the attention core, as Megatron's does).
    selective_recomputed_matmul_share: float = 0.0
    # The loss over vocabulary chunks (or fused), so the full fp32 logits and their gradient
    # are never materialised at once.
    loss_chunking: bool = False
    # Bytes per token per vocabulary entry at the loss peak (logits, their fp32 copies and
    # gradients); with loss_chunking the full-vocabulary part is only the bf16 logits.
    loss_bytes_per_vocab_entry: float = 8.0
    # Serving: the stack's memory fraction (vLLM gpu_memory_utilization, SGLang
    # mem_fraction_static, TensorRT-LLM free_gpu_memory_fraction) and how it is applied.
    gpu_memory_utilization_default: float | None = None
    budget: Budget | None = None
    # Serving: memory outside PyTorch's allocator (CUDA context, NCCL), one GPU / several.
    non_torch_bytes_single: float = 0.0
    non_torch_bytes_multi: float = 0.0
    # Serving: CUDA-graph memory taken from the budget (0: outside it).
    cuda_graph_bytes: float = 0.0
    optimizer_offload: bool = False  # optimizer states on the CPU by default
    parameter_offload: bool = False  # parameters on the CPU by default
    offload_supported: bool = False  # the stack can place optimizer states / params on CPU
    # The optimizer steps each parameter as its gradient is ready: no full gradient buffer
    # (the default; `optimizer_in_backward_supported`: the stack lets a user choose it).
    optimizer_in_backward: bool = False
    optimizer_in_backward_supported: bool = False
    paged_optimizer: bool = False  # paged (and 8-bit) optimizer states, as in bitsandbytes
    fused_kernels: bool = False  # fused/Triton kernels (RoPE, norms, MLP, loss)
    # Training: 16-bit weights with no fp32 master copy (the whole model trains in bf16).
    pure_bf16: bool = False
    # Training: torch.autocast over fp32 parameters (Hugging Face Trainer's fp16 / bf16):
    # fp32 weights and gradients plus the 16-bit casts of the weights, and the attention
    # softmax in fp32 (autocast's fp32 op list).
    autocast: bool = False
    # QLoRA: the non-quantised parameters (embeddings, output head, norms) and the residual
    # stream they produce are upcast to fp32.
    qlora_fp32_residual: bool = False
    # LoRA sharded by ZeRO-3 / FSDP: the frozen base is loaded in fp32 and FSDP's mixed
    # precision computes in bf16, so each GPU keeps an fp32 shard of it.
    sharded_lora_base_fp32: bool = False
    # Training: zero_grad(set_to_none=True) frees the gradients after each step (torch.optim's
    # default since PyTorch 2.0), so they are not live beside the next step's loss. False: a
    # gradient buffer kept for the whole run.
    gradients_freed_between_steps: bool = True
    # Training: the activations kept for the backward pass are offloaded to CPU memory (the
    # default; `activation_offload_supported`: the stack lets a user choose it).
    checkpoint_offload: bool = False
    activation_offload_supported: bool = False
    sources: tuple[str, ...] = ()

    @property
    def serving(self) -> bool:
        return self.budget is not None

    def non_torch_bytes(self, gpu_count: int, fast_link: bool = True) -> float:
        if gpu_count == 1:
            return self.non_torch_bytes_single
        return self.non_torch_bytes_multi if fast_link else PCIE_NON_TORCH_BYTES

    def defaults(self) -> dict[str, object]:
        """The stack's published behaviour, as the answer shows it."""
        shown: dict[str, object] = {"name": self.name, "label": self.label}
        if self.serving:
            shown |= {
                "gpu_memory_utilization_default": self.gpu_memory_utilization_default,
                "budget": str(self.budget),
            }
        else:
            shown |= {
                "checkpointing": str(self.checkpointing),
                "loss_chunking": self.loss_chunking,
                "optimizer_offload": self.optimizer_offload,
                "parameter_offload": self.parameter_offload,
                "optimizer_in_backward": self.optimizer_in_backward,
                "activation_offloading": self.checkpoint_offload,
                "paged_optimizer": self.paged_optimizer,
                "fused_kernels": self.fused_kernels,
            }
        return shown | {"sources": list(self.sources)}


VLLM_REFERENCE = (
    "https://github.com/llm-d-incubation/llm-d-planner/blob/main/accuracy/results/v0.19.0/"
    "accuracy_report.md"
)

STACKS: dict[str, Stack] = {
    stack.name: stack
    for stack in (
        Stack(
            name="vllm",
            label="vLLM",
            tasks=SERVING,
            # gpu_memory_utilization defaults to 0.9 (vLLM EngineArgs); vLLM v0.19's logs on an
            # H100 add up to the budget: 0.95 × 79.19 GiB = weights 14.99 + activation peak
            # 1.89 + non-torch 0.25 + KV pool 58.11 GiB (sizing_reference.json).
            gpu_memory_utilization_default=0.90,
            budget=Budget.TOTAL,
            # Measured non-torch memory: 0.25 GiB at TP=1, 2.07 GiB at TP=2 (2.13 at TP=4).
            non_torch_bytes_single=0.25 * GIB,
            non_torch_bytes_multi=2.07 * GIB,
            # CUDA graphs are captured after the KV pool is sized, from the memory left over
            # above the budget: the logged budget sums without them.
            cuda_graph_bytes=0.0,
            sources=(
                "https://docs.vllm.ai/en/stable/api/vllm/config/cache/",
                VLLM_REFERENCE,
            ),
        ),
        Stack(
            name="sglang",
            label="SGLang",
            tasks=SERVING,
            # mem_fraction_static: weights + KV pool; "The default value is 0.9".
            gpu_memory_utilization_default=0.90,
            budget=Budget.STATIC,
            # Not published per GPU count by SGLang: vLLM's measured figures stand in (the same
            # CUDA context and NCCL buffers); low confidence.
            non_torch_bytes_single=0.25 * GIB,
            non_torch_bytes_multi=2.07 * GIB,
            sources=(
                "https://github.com/sgl-project/sglang/blob/main/docs/backend/server_arguments.md",
            ),
        ),
        Stack(
            name="tensorrt_llm",
            label="TensorRT-LLM",
            tasks=SERVING,
            # KvCacheConfig.free_gpu_memory_fraction = 0.9: "TensorRT LLM will try to allocate
            # 90% of free GPU memory for KV cache", after weights and the activation workspace
            # it pre-computes at build time.
            gpu_memory_utilization_default=0.90,
            budget=Budget.FREE,
            non_torch_bytes_single=0.25 * GIB,
            non_torch_bytes_multi=2.07 * GIB,
            sources=(
                "https://nvidia.github.io/TensorRT-LLM/examples/kvcacheconfig.html",
                "https://nvidia.github.io/TensorRT-LLM/reference/memory.html",
            ),
        ),
        Stack(
            name="hf_peft",
            label="Hugging Face Transformers + PEFT",
            tasks=FINE_TUNING,
            # Trainer's gradient_checkpointing wraps each decoder layer: its input is kept.
            checkpointing=Checkpointing.FULL,
            # ForCausalLMLoss upcasts the logits to fp32 (4 bytes per vocabulary entry per
            # token) and cross_entropy keeps the fp32 log-probabilities (4); in the backward
            # pass their fp32 gradient (4) and the 16-bit gradient of the logits (2) are live
            # too. Checked on Unsloth's HF + FA2 context table (8B and 70B QLoRA).
            loss_chunking=False,
            loss_bytes_per_vocab_entry=14.0,
            # "6 bytes * number of parameters for mixed precision training (maintains a model
            # in fp32 and one in fp16 in memory)", gradients "always kept in fp32", AdamW 8
            # (model_memory_anatomy.md): 18 bytes per parameter, not the ZeRO layout's 16.
            autocast=True,
            # prepare_model_for_kbit_training casts every non-4-bit parameter (embeddings,
            # lm_head, norms) to fp32; the residual stream they feed is then fp32.
            qlora_fp32_residual=True,
            # PEFT's FSDP recipe loads the base with torch_dtype float32 unless a 4-bit storage
            # dtype is set (examples/sft/utils.py), for FSDP's bf16 mixed precision to cast.
            sharded_lora_base_fp32=True,
            # Accelerate's FSDP (fsdp_offload_params: parameters, gradients and the optimizer
            # step on the CPU; PEFT's QLoRA + FSDP recipe for a 70B model on 2x 24 GB) and
            # DeepSpeed ZeRO-3 (offload_optimizer / offload_param; PEFT's "ZeRO3 and CPU
            # Offloading" recipe).
            offload_supported=True,
            sources=(
                "https://github.com/huggingface/transformers/blob/main/src/transformers/loss/loss_utils.py",
                "https://github.com/huggingface/transformers/blob/main/docs/source/en/model_memory_anatomy.md",
                "https://pytorch.org/docs/stable/amp.html#cuda-ops-that-can-autocast-to-float32",
                "https://github.com/huggingface/peft/blob/main/src/peft/utils/other.py",
                "https://github.com/unslothai/unsloth#-performance-benchmarking",
                "https://github.com/huggingface/peft/blob/main/docs/source/accelerate/fsdp.md",
                "https://github.com/huggingface/peft/blob/main/docs/source/accelerate/deepspeed.md",
                "https://github.com/huggingface/peft/blob/main/examples/sft/utils.py",
            ),
        ),
        Stack(
            name="torchtune",
            label="torchtune",
            tasks=FINE_TUNING,
            checkpointing=Checkpointing.FULL,
            # CEWithChunkedOutputLoss: the output projection in 8 chunks of bf16 logits (2
            # bytes per vocabulary entry per token, all chunks). Compiled, as the README's
            # published runs are (compile=True), compile_loss fuses each chunk's fp32 upcast
            # into the cross-entropy kernel ("we only compile the upcast + cross-entropy
            # calculation", https://github.com/pytorch/torchtune/blob/
            # fc451165b8835271d436f8e0ca3fcfbf5bd038e3/torchtune/training/_compile.py), so one
            # chunk's bf16 gradient is the only extra: 2 / 8 = 0.25 byte (uncompiled, the fp32
            # chunk and its gradient: 1 byte).
            loss_chunking=True,
            loss_bytes_per_vocab_entry=2.25,
            # Recipes train the whole model in bf16 (dtype: bf16): no fp32 master weights,
            # adapters in bf16; the single-device full recipe steps the optimizer in the
            # backward pass (optimizer_in_bwd: True) with bitsandbytes' PagedAdamW8bit.
            pure_bf16=True,
            optimizer_in_backward=True,
            optimizer_in_backward_supported=True,  # optimizer_in_bwd: True / False
            paged_optimizer=True,
            offload_supported=True,  # fsdp_cpu_offload
            # enable_activation_offloading (off in the recipes): what each layer keeps for the
            # backward pass is streamed to CPU memory and back.
            activation_offload_supported=True,
            sources=(
                "https://github.com/pytorch/torchtune#memory-and-training-speed",
                "https://pytorch.org/torchtune/main/tutorials/memory_optimizations.html",
                "https://github.com/pytorch/torchtune/blob/main/recipes/configs/llama3_1/8B_full_single_device.yaml",
            ),
        ),
        Stack(
            name="unsloth",
            label="Unsloth",
            tasks=frozenset({"lora", "qlora"}),
            checkpointing=Checkpointing.FULL,
            # "Unsloth" gradient checkpointing offloads each layer's input to system RAM
            # asynchronously; Apple's Cut Cross-Entropy never materialises the logits.
            checkpoint_offload=True,
            activation_offload_supported=True,
            loss_chunking=True,
            loss_bytes_per_vocab_entry=0.0,
            fused_kernels=True,
            sources=(
                "https://unsloth.ai/blog/llama3-3",
                "https://github.com/unslothai/unsloth#-performance-benchmarking",
            ),
        ),
        Stack(
            name="fsdp2",
            label="PyTorch FSDP2",
            tasks=PRE_TRAINING,
            # torchtitan's activation_checkpoint.mode "full": every block wrapped.
            checkpointing=Checkpointing.FULL,
            # Its selective policy (SelectiveAC) saves every op's output "except every second
            # mm/linear": half the forward's matmul FLOPs run again.
            selective_recomputed_matmul_share=0.5,
            offload_supported=True,  # CPUOffloadPolicy: parameters, gradients, optimizer
            sources=(
                "https://github.com/pytorch/torchtitan/blob/main/docs/fsdp.md",
                "https://github.com/pytorch/torchtitan/blob/b5bcd76c66d0acb1a08b176d9639425bc55e0b2a/torchtitan/distributed/activation_checkpoint.py",
                "https://pytorch.org/docs/stable/distributed.fsdp.fully_shard.html",
            ),
        ),
        Stack(
            name="nemo_automodel",
            label="NVIDIA NeMo Automodel",
            tasks=PRE_TRAINING | {"full", "lora"},
            # parallelizer.apply_ac wraps every decoder block in checkpoint_wrapper.
            checkpointing=Checkpointing.FULL,
            # initialize_weights casts the model to bf16 (its default dtype) before FSDP2
            # shards it: no fp32 master, and torch.optim.Adam keeps its moments in bf16.
            pure_bf16=True,
            # MaskedCrossEntropy without the fp32 upcast (fp32_upcast: false in the benchmark
            # recipes): bf16 logits, log-probabilities and both their gradients, 2 bytes each.
            loss_bytes_per_vocab_entry=8.0,
            offload_supported=True,  # FSDP2Manager's offload_policy (CPUOffloadPolicy)
            sources=(
                "https://github.com/NVIDIA-NeMo/Automodel/blob/main/nemo_automodel/components/models/qwen3_moe/model.py",
                "https://github.com/NVIDIA-NeMo/Automodel/blob/main/nemo_automodel/components/moe/parallelizer.py",
                "https://github.com/NVIDIA-NeMo/Automodel/blob/main/examples/benchmark/configs/qwen3_moe_30b_te_deepep.yaml",
            ),
        ),
        Stack(
            name="deepspeed_zero",
            label="DeepSpeed ZeRO",
            tasks=PRE_TRAINING,
            checkpointing=Checkpointing.FULL,
            # contiguous_gradients: reduced gradients go to a buffer allocated for the run.
            gradients_freed_between_steps=False,
            # ZeRO-Offload (optimizer states on CPU) and ZeRO-Infinity (parameters too).
            offload_supported=True,
            sources=(
                "https://arxiv.org/abs/1910.02054",
                "https://www.deepspeed.ai/tutorials/zero-offload/",
            ),
        ),
        Stack(
            name="megatron",
            label="Megatron-LM",
            tasks=PRE_TRAINING,
            # --recompute-granularity selective: recompute only the attention core.
            checkpointing=Checkpointing.SELECTIVE,
            # DistributedDataParallel's grad buffer (param_and_grad_buffer.py) lives for the run.
            gradients_freed_between_steps=False,
            fused_kernels=True,
            sources=(
                "https://arxiv.org/abs/2205.05198",
                "https://github.com/NVIDIA/Megatron-LM",
            ),
        ),
    )
}

# The serving stacks' non-torch memory is vLLM's (SGLang and TensorRT-LLM borrow it).
fitted(
    'STACKS["vllm", "sglang", "tensorrt_llm"].non_torch_bytes_single',
    fitted_on=("vllm-llama-3.1-8b-tp1-non-torch",),
)
fitted(
    'STACKS["vllm", "sglang", "tensorrt_llm"].non_torch_bytes_multi',
    fitted_on=("vllm-llama-3.1-8b-tp2-non-torch", "vllm-llama-3.1-8b-tp4-non-torch"),
)
# Hugging Face's full-vocabulary loss went from 16 to 14 bytes with Unsloth's HF + FA2 column
# in view (8B on 24 and 80 GB and the OOM past 24 GB; 70B on 80 GB and its OOM on 48 GB).
fitted(
    'STACKS["hf_peft"].loss_bytes_per_vocab_entry',
    fitted_on=(
        "unsloth-table-llama-3.1-8b-hf-peft-24gb-max-context",
        "unsloth-table-llama-3.1-8b-hf-peft-80gb-max-context",
        "unsloth-llama-3.1-8b-hf-peft-24gb-12264-oom",
        "unsloth-table-llama-3.3-70b-hf-peft-80gb-max-context",
        "unsloth-llama-3.3-70b-hf-peft-48gb-oom",
    ),
)
# torchtune's optimization-flags table (Llama 3.2 3B, each technique added in turn): its
# compiled loss (2.25) was read off it, and so were the allocated-peak phases (phases.py).
TORCHTUNE_FLAGS_TABLE_ROWS = (
    "torchtune-llama-3.2-3b-full-chunked-ce-a100-memory",
    "torchtune-llama-3.2-3b-full-activation-checkpointing-a100-memory",
    "torchtune-llama-3.2-3b-full-optimizer-in-backward-a100-memory",
    "torchtune-llama-3.2-3b-full-activation-offloading-a100-memory",
    "torchtune-llama-3.2-3b-full-adamw-8bit-a100-memory",
    "torchtune-llama-3.2-3b-lora-a100-memory",
    "torchtune-llama-3.2-3b-qlora-a100-memory",
)
fitted('STACKS["torchtune"].loss_bytes_per_vocab_entry', fitted_on=TORCHTUNE_FLAGS_TABLE_ROWS)
fitted(
    'STACKS["fsdp2"].selective_recomputed_matmul_share',
    fitted_on=(),
    source="torchtitan's SelectiveAC policy (its code, not a measurement)",
)

DEFAULT_STACK_BY_TASK: dict[str, str] = {
    "inference": "vllm",
    "lora": "hf_peft",
    "qlora": "hf_peft",
    "full": "hf_peft",
    "pretrain": "fsdp2",
}

GPU_MEMORY_UTILIZATION_MIN, GPU_MEMORY_UTILIZATION_MAX = 0.5, 0.99


def stacks_for(task: str) -> list[str]:
    """The stacks that run `task`, default first."""
    default = DEFAULT_STACK_BY_TASK[task]
    return [default, *(name for name, s in STACKS.items() if task in s.tasks and name != default)]


def stack_problem(stack_name: str, task: str) -> str | None:
    """Why `stack_name` cannot run `task` (naming the stacks that can), or None."""
    stack = STACKS.get(stack_name)
    if stack is not None and task in stack.tasks:
        return None
    what = "is not a stack" if stack is None else f"does not run task={task}"
    return f"stack {stack_name!r} {what}: choose one of {', '.join(stacks_for(task))}"
