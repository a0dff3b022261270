"""How fast: serving (prefill over the prompt, decode from the bandwidth roofline with
dequantisation and tensor-parallel all-reduces) and training (6·N·D plus recomputation over
dense peak × the architecture's utilisation band).

efficiency.py holds the published shares of peak, communication.py the all-reduce model,
inference.py and training.py the two answers.
"""

from advisor.domain.sizing.speed.efficiency import (
    DECODE_BANDWIDTH_EFFICIENCY,
    INFERENCE_COMPUTE_EFFICIENCY,
    TRAINING_UTILIZATION_DEFAULT,
    compute_peak_tflops,
    training_utilization,
)
from advisor.domain.sizing.speed.inference import (
    InferenceSpeed,
    average_decode_kv_tokens,
    inference_speed,
    prompt_tokens,
    tensor_parallel_allreduce_seconds,
)
from advisor.domain.sizing.speed.training import (
    TrainingTime,
    attention_flops,
    recompute_flops,
    training_flops,
    training_time,
)

__all__ = [
    "DECODE_BANDWIDTH_EFFICIENCY",
    "INFERENCE_COMPUTE_EFFICIENCY",
    "TRAINING_UTILIZATION_DEFAULT",
    "InferenceSpeed",
    "TrainingTime",
    "attention_flops",
    "average_decode_kv_tokens",
    "compute_peak_tflops",
    "inference_speed",
    "prompt_tokens",
    "recompute_flops",
    "tensor_parallel_allreduce_seconds",
    "training_flops",
    "training_time",
    "training_utilization",
]
