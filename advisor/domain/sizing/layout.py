"""A layout of GPUs for one workload: how many, how the model is split over them, and what
the layout's GPU changes in what they hold."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Parallelism:
    gpu_count: int
    tensor_parallel: int = 1
    zero_stage: int = 0
    # Training across nodes: pipeline stages, only where the model does not fit otherwise.
    pipeline_parallel: int = 1
    # The GPUs share NVLink (or another fast fabric); False: they talk over PCIe.
    fast_link: bool = True
    # Serving: the routed experts' bytes as the stack's kernels load them on this GPU over
    # their stored bytes (kernel_padding.py); 1.0 where nothing is padded.
    expert_padding: float = 1.0
    # Training a MoE: its routed experts split over this many GPUs of each data-parallel group
    # (expert parallelism, Megatron's EP), each holding 1/EP of them with their gradients.
    expert_parallel: int = 1

    @property
    def data_parallel(self) -> int:
        return self.gpu_count // (self.tensor_parallel * self.pipeline_parallel)

    def describe(self) -> str:
        if self.gpu_count == 1:
            return "single GPU"
        parts = []
        if self.tensor_parallel > 1:
            parts.append(f"tensor parallel {self.tensor_parallel}")
        if self.pipeline_parallel > 1:
            parts.append(f"pipeline parallel {self.pipeline_parallel}")
        if self.expert_parallel > 1:
            parts.append(f"expert parallel {self.expert_parallel}")
        if self.data_parallel > 1:
            parts.append(
                f"data parallel {self.data_parallel}"
                + (f" with ZeRO-{self.zero_stage}" if self.zero_stage else "")
            )
        return ", ".join(parts)
