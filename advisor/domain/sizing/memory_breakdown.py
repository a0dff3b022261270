"""Memory per GPU as a breakdown whose every line says where it comes from, with the range
each line carries and what a GPU leaves usable; the lines themselves are serving_memory.py's
and training_memory.py's."""

from dataclasses import dataclass
from functools import cached_property

from advisor.domain.provenance import fitted
from advisor.domain.ranges import Range
from advisor.domain.sizing.memory_spread import (
    CUDA_CONTEXT_SPREAD_BYTES,
    MEMORY_SPREAD,
    SERVING_RUNTIME_SPREAD,
)

GIB = 2**30

# What the device lets CUDA use: an H100 "80 GB" shows 79.19 GiB to PyTorch (vLLM's
# measurement in sizing_reference.json); driver and ECC reservations take the rest. A serving
# stack's budget is its memory fraction of this (stacks.py).
USABLE_FRACTION = 0.99
fitted(
    "USABLE_FRACTION",
    fitted_on=(),
    source="vLLM's 79.19 GiB physical on an H100 (llm-d-planner's v0.19.0 report: a note of "
    "its rows, not a row's figure)",
)
# CUDA context, kernels and library workspaces. Seen from 0.25 GiB (vLLM, lazy module loading)
# to 1.3 GB (Hugging Face's measurement on a V100); we assume the middle.
CUDA_CONTEXT_BYTES = 0.75 * GIB
fitted("CUDA_CONTEXT_BYTES", fitted_on=("vllm-llama-3.1-8b-tp1-non-torch",))
# NCCL buffers when GPUs talk: vLLM's non-torch memory went from 0.25 GiB at TP=1 to
# 2.07 GiB at TP=2 on the same model.
COLLECTIVE_BUFFER_BYTES = 1.8 * GIB
fitted(
    "COLLECTIVE_BUFFER_BYTES",
    fitted_on=("vllm-llama-3.1-8b-tp1-non-torch", "vllm-llama-3.1-8b-tp2-non-torch"),
)
# The caching allocator rounds and fragments what is allocated and freed as the job runs
# (activations, KV blocks, gradients, optimizer steps); weights are loaded once, contiguously.
ALLOCATOR_HEADROOM_FRACTION = 0.05
FP32_BYTES = 4


MEMORY_COMPONENTS = (
    "weights",
    "gathered_layers",
    "gradients",
    "optimizer_states",
    "activations",
    "kv_cache",
    "logits",
    "runtime_overhead",
    "allocator_headroom",
)


@dataclass(frozen=True)
class MemoryBreakdown:
    """Bytes per GPU."""

    weights: float = 0.0
    # ZeRO-3 / FSDP: the whole parameters of the layers being run and prefetched, beside the
    # shard of every layer that `weights` holds.
    gathered_layers: float = 0.0
    gradients: float = 0.0
    optimizer_states: float = 0.0
    activations: float = 0.0
    kv_cache: float = 0.0
    logits: float = 0.0
    runtime_overhead: float = 0.0
    allocator_headroom: float = 0.0

    # Read thousands of times per answer (every candidate's fit, reasons and remedies); the
    # breakdown never changes, so it is summed once.
    @cached_property
    def total(self) -> float:
        return (
            self.weights
            + self.gathered_layers
            + self.gradients
            + self.optimizer_states
            + self.activations
            + self.kv_cache
            + self.logits
            + self.runtime_overhead
            + self.allocator_headroom
        )

    @property
    def model_states(self) -> float:
        return self.weights + self.gradients + self.optimizer_states

    def as_dict(self) -> dict[str, int]:
        return dict(self._rounded)

    @cached_property
    def _rounded(self) -> dict[str, int]:
        # One breakdown serves every GPU of its layout in an answer: rounded once.
        return {name: round(getattr(self, name)) for name in MEMORY_COMPONENTS}

    def component_range(self, name: str, *, serving: bool = False) -> Range:
        """One line's low / expected / high, from how far such lines are from measurements."""
        value = getattr(self, name)
        if name == "runtime_overhead":
            if serving:
                spread = value * SERVING_RUNTIME_SPREAD
            else:
                # The CUDA context is the uncertain part; NCCL buffers are a measured figure.
                context = min(value, CUDA_CONTEXT_BYTES)
                spread = CUDA_CONTEXT_SPREAD_BYTES + (value - context) * SERVING_RUNTIME_SPREAD
            return Range(max(value - spread, 0.0), value, value + spread)
        below, above = MEMORY_SPREAD[name]
        return Range(value * (1 - below), value, value * (1 + above))

    def total_range(self, *, serving: bool = False) -> Range:
        low = high = 0.0
        for name in MEMORY_COMPONENTS:
            line = self.component_range(name, serving=serving)
            low, high = low + line.low, high + line.high
        return Range(low, self.total, high)


def format_gib(value: float) -> str:
    """Bytes as the answer writes them: '71.3 GiB'."""
    return f"{value / GIB:.1f} GiB"


def usable_bytes(memory_gib: float) -> float:
    return memory_gib * GIB * USABLE_FRACTION
