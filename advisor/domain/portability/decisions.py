"""What a rule's finding decides for a move to each target (DECISIONS), used by the code
scan's verdicts, and the facts a team can state about its stack (STACK_FACTS), used by the
questionnaire's, which decide through the same DECISIONS where a rule stands for them.
"""

from dataclasses import dataclass
from enum import StrEnum

from advisor.domain.portability.questions import Target
from advisor.domain.portability.rules import REWRITE_RISK, RULES

# Tags a finding can carry (the scanner's detectors set them) that a decision reads.
NCCL_DIRECT = "nccl-direct"  # COMM005: a direct NCCL binding, not an availability probe
CUDNN = "cudnn"
TENSORRT = "tensorrt"
VENDOR_DNN_TAGS = frozenset({CUDNN, TENSORRT})


class RewriteWhen(StrEnum):
    """When a rule's finding makes a move to one target a rewrite."""

    NEVER = "never"
    RISKY = "when rewrite-risk"  # by the rule's default or in the finding's context
    # As RISKY, and also a re-tune finding outside a declared abstraction layer (with `tags`:
    # only one carrying one of them).
    OUTSIDE_LAYER = "outside a layer"
    ALWAYS = "always"


@dataclass(frozen=True)
class Decision:
    """What one rule's finding means for a move to one target."""

    rewrite: RewriteWhen
    decides_re_tune: bool = True  # a re-tune finding of it is among what decides a re-tune
    tags: frozenset[str] = frozenset()

    def rewrites(self, *, severity: str, in_layer: bool, tags: frozenset[str]) -> bool:
        if self.rewrite in (RewriteWhen.NEVER, RewriteWhen.ALWAYS):
            return self.rewrite is RewriteWhen.ALWAYS
        if severity == REWRITE_RISK:
            return True
        return (
            self.rewrite is RewriteWhen.OUTSIDE_LAYER
            and not in_layer
            and (not self.tags or bool(self.tags & tags))
        )


# Another vendor (AMD, Intel, Google, AWS): a rewrite-risk finding is a rewrite, except memory
# sizes, which carry over to a part with as much memory; every re-tune finding is a re-tune.
# A smaller NVIDIA part: only memory sizes and tiles sized for A100 shared memory matter.
_OTHER_VENDORS = (
    Target.AMD_ROCM,
    Target.INTEL_ONEAPI,
    Target.GOOGLE_TPU,
    Target.AWS_TRAINIUM,
    Target.INTEL_GAUDI,
)
_BY_TARGET = {
    **{target: Decision(RewriteWhen.RISKY) for target in _OTHER_VENDORS},
    Target.NVIDIA_SMALLER: Decision(RewriteWhen.NEVER, decides_re_tune=False),
}
_BY_CATEGORY = {("MEM", target): Decision(RewriteWhen.NEVER) for target in Target}
# Targets with no NCCL API: oneCCL is not NCCL's API, and TPUs and Trainium run collectives
# through XLA (Neuron's collectives on Trainium). RCCL is NCCL's API, and Gaudi's HCCL imitates
# NCCL's interface (https://docs.habana.ai/en/latest/API_Reference_Guides/HCCL_APIs): a port
# by rename. cuDNN and TensorRT have no drop-in on any of the four. Inside a declared
# abstraction layer they are already behind a switch.
_NO_NCCL_API = (Target.INTEL_ONEAPI, Target.GOOGLE_TPU, Target.AWS_TRAINIUM)
_NO_CUDNN_OR_TENSORRT = (*_NO_NCCL_API, Target.INTEL_GAUDI)
_OUTSIDE_A_LAYER_WITHOUT_A_DROP_IN = {
    "COMM002": Decision(RewriteWhen.OUTSIDE_LAYER),
    "COMM005": Decision(RewriteWhen.OUTSIDE_LAYER, tags=frozenset({NCCL_DIRECT})),
    "DEP001": Decision(RewriteWhen.OUTSIDE_LAYER, tags=VENDOR_DNN_TAGS),
    "DEP002": Decision(RewriteWhen.OUTSIDE_LAYER, tags=VENDOR_DNN_TAGS),
    "DEP004": Decision(RewriteWhen.OUTSIDE_LAYER, tags=VENDOR_DNN_TAGS),
}
_BY_RULE = {
    **{
        (rule_id, target): decision
        for rule_id, decision in _OUTSIDE_A_LAYER_WITHOUT_A_DROP_IN.items()
        for target in (_NO_NCCL_API if rule_id.startswith("COMM") else _NO_CUDNN_OR_TENSORRT)
    },
    # Sizes that drive batch and buffer sizes, and batches calibrated to one SKU's HBM.
    ("MEM001", Target.NVIDIA_SMALLER): Decision(RewriteWhen.RISKY),
    ("MEM004", Target.NVIDIA_SMALLER): Decision(RewriteWhen.ALWAYS),
    ("TC005", Target.NVIDIA_SMALLER): Decision(RewriteWhen.NEVER),
}

# Rule id -> target -> what its finding decides: every rule, every target.
DECISIONS: dict[str, dict[Target, Decision]] = {
    rule.id: {
        target: _BY_RULE.get((rule.id, target))
        or _BY_CATEGORY.get((rule.category, target))
        or _BY_TARGET[target]
        for target in Target
    }
    for rule in RULES.values()
}


class Fact(StrEnum):
    """What a team can say about its stack (the questionnaire) that can decide a rewrite."""

    HAND_TILED_MATMULS = "hand_tiled_matmuls"
    COMPILE_TIME_TF32 = "compile_time_tf32"
    NVLINK_COLLECTIVES = "nvlink_collectives"
    DIRECT_NCCL = "direct_nccl"
    CUTLASS_KERNELS = "cutlass_kernels"
    CUDA_CPP_KERNELS = "cuda_cpp_kernels"
    TENSORRT = "tensorrt"
    FP8 = "fp8"
    HARD_CODED_MEMORY = "hard_coded_memory"


@dataclass(frozen=True)
class StackFact:
    """`why` as a verdict says it. Where findings stand for the fact (`rule_ids`, `tags`), it
    decides a rewrite on the targets where one of them would: at the rule's default severity,
    outside any abstraction layer. Where none does, `targets` says where it decides one."""

    why: str
    rule_ids: tuple[str, ...] = ()
    tags: frozenset[str] = frozenset()
    targets: frozenset[Target] = frozenset()

    def rewrites_on(self, target: Target) -> bool:
        return target in self.targets or any(
            DECISIONS[rule_id][target].rewrites(
                severity=RULES[rule_id].severity, in_layer=False, tags=self.tags
            )
            for rule_id in self.rule_ids
        )


# CUDA C++ and CUTLASS port to AMD by HIPify; elsewhere the kernels are written again: SYCL
# (oneAPI), Pallas (TPU), NKI (Trainium), TPC-C (Gaudi).
_NO_CUDA_PORT = frozenset(
    {Target.INTEL_ONEAPI, Target.GOOGLE_TPU, Target.AWS_TRAINIUM, Target.INTEL_GAUDI}
)
# No FP8 on Intel's Max 1550 nor on the TPUs the catalogue lists (v2 to v6e); Trainium and
# Gaudi 2 and 3 have it.
_NO_FP8 = frozenset({Target.INTEL_ONEAPI, Target.GOOGLE_TPU})

# In the order a verdict lists them.
STACK_FACTS: dict[Fact, StackFact] = {
    Fact.HAND_TILED_MATMULS: StackFact(
        "hand-tiled tensor-core matmuls (TC): the fragment shapes and ISA differ",
        ("TC001", "TC002", "TC003"),
    ),
    Fact.COMPILE_TIME_TF32: StackFact(
        "TF32 compiled in (PREC003): not a policy the target can change", ("PREC003",)
    ),
    Fact.NVLINK_COLLECTIVES: StackFact(
        "collectives that assume NVLink/NVSwitch (COMM003)", ("COMM003",)
    ),
    Fact.DIRECT_NCCL: StackFact(
        "NCCL called directly (COMM002): oneCCL and XLA's collectives are not its API",
        ("COMM002",),
    ),
    # A stack built on CUTLASS kernels, not one CUTLASS tile config (a TC004 finding): the
    # kernels themselves have no SYCL port.
    Fact.CUTLASS_KERNELS: StackFact(
        "CUTLASS kernels (TC004): no port to SYCL, Pallas, NKI or TPC-C", targets=_NO_CUDA_PORT
    ),
    Fact.CUDA_CPP_KERNELS: StackFact(
        "hand-written CUDA C++ kernels: written again in SYCL, Pallas, NKI or TPC-C",
        targets=_NO_CUDA_PORT,
    ),
    Fact.TENSORRT: StackFact(
        "TensorRT (DEP004): no equivalent off NVIDIA but AMD's MIGraphX",
        ("DEP004",),
        tags=frozenset({TENSORRT}),
    ),
    Fact.FP8: StackFact(
        "FP8 relied on: Intel's Max 1550 and TPUs up to v6e have no FP8", targets=_NO_FP8
    ),
    Fact.HARD_CODED_MEMORY: StackFact(
        "memory sizes hard-coded (MEM001): they drive batch and buffer sizes", ("MEM001",)
    ),
}
