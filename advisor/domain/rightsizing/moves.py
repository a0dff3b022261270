"""A measured job on another vendor's accelerator is a move, not a swap: what the trace says
the job is (its framework and vendor), and what moving it costs its code (a re-tune or a
rewrite), read from the compatibility table and the other stacks (portability/stack_moves.py).

The framework is what wrote the trace: a Kineto trace is PyTorch's profiler; an Nsight Systems
report is any CUDA program; an nvidia-smi log says nothing of the code. The vendor is the
platform of the GPU it ran on (its name and deviceProperties, matched in the catalogue).
"""

from collections.abc import Sequence
from dataclasses import dataclass

from advisor.domain.compatibility import PLATFORM_NAMES, support, vendor_of
from advisor.domain.compatibility.moves import REWRITE, moves_for
from advisor.domain.devices import Device
from advisor.domain.portability.rule import RE_TUNE
from advisor.domain.rightsizing.measured import MeasuredRank

PYTORCH, CUDA, UNKNOWN = "pytorch", "cuda", "unknown"
# The PyTorch training stacks whose own rows say where PyTorch itself runs.
_PYTORCH_STACKS = ("fsdp2", "hf_peft")


@dataclass(frozen=True)
class Move:
    verdict: str  # RE_TUNE or REWRITE
    why: str


def trace_framework(ranks: Sequence[MeasuredRank]) -> str:
    sources = {rank.source for rank in ranks}
    if "kineto" in sources:
        return PYTORCH
    return CUDA if "nsys" in sources else UNKNOWN


def move_to(current: Device, candidate: Device, framework: str) -> Move | None:
    """None when the candidate runs the job as it is (the same vendor's platform); otherwise
    what the move costs the job's code."""
    if vendor_of(candidate.platform) == vendor_of(current.platform):
        return None
    where = PLATFORM_NAMES[candidate.platform]
    if framework == PYTORCH:
        if any(support(stack, candidate.platform).runs for stack in _PYTORCH_STACKS):
            return Move(
                RE_TUNE,
                f"PyTorch runs on {where}: the model code stays; CUDA C++ kernels and "
                "CUDA-only libraries in it need their ports (a code scan lists them)",
            )
        retunes = [
            m
            for m in moves_for(candidate.platform, "pretrain")
            + moves_for(candidate.platform, "lora")
            if m.move == RE_TUNE
        ]
        if retunes:
            return Move(
                RE_TUNE,
                f"{retunes[0].stack} on {where}: {retunes[0].why}; CUDA kernels do not come along",
            )
        return Move(REWRITE, f"no PyTorch path to {where} that keeps the code: a rewrite")
    what = "a CUDA program" if framework == CUDA else "a job whose code the log does not show"
    return Move(
        REWRITE,
        f"{what}: its CUDA code needs porting to {where} (HIP on AMD, SYCL on Intel, none to "
        "TPU or Neuron); a code scan says how much",
    )
