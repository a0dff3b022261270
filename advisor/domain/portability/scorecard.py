"""The repo-level answers: the catalogue's four questions and a verdict per target.

Scorecard. Each question has locked evidence (findings) and portable evidence (findings of
portable-intent APIs, or portable forms seen in code); the answer is "locked" when only locked
evidence exists, "portable" when only portable, "mixed" when both, "no evidence" when neither.

    question                        locked evidence          portable evidence
    matmuls: library or             TC001 TC002 TC003        TC004 (CUTLASS); GEMM library calls
      hand-tiled?                   TC005 TC006              (cuBLAS, hipBLAS, rocBLAS,
                                                             torch.matmul, nn.Linear, SDPA)
    precision: runtime policy or    PREC001 literal,         PREC002, PREC001 from config,
      compile-time constant?        PREC003 compile-time,    PREC003 runtime-selected,
                                    PREC004, PREC005         autocast, is_bf16_supported
    collectives: through an         COMM001, COMM002 outside COMM002 inside a declared layer,
      abstraction?                  a layer, COMM003,        torch.distributed collectives,
                                    COMM005, COMM006         deepspeed.comm,
                                                             get_default_backend_for_device
    memory sizes: queried or        MEM001-MEM006            mem_get_info, device properties,
      hard-coded?                                            cudaMemGetInfo, hipMemGetInfo,
                                                             find_executable_batch_size

Verdicts: "rewrite" or "re-tune", with the findings that decide it (at most 25).

    AMD ROCm: rewrite when any finding outside MEM is rewrite-risk: hand tiling and
        tensor-core PTX (TC), warp-32 code (WARP002/003), inline PTX (ASM001), __CUDA_ARCH__
        gates without #else (ARCH003), CUDAExtension over PTX (ARCH004), NVLink algorithms
        (COMM003), unguarded CUDA-only imports (DEP001), compile-time TF32 (PREC003),
        TF32-calibrated tolerances (PREC005). Otherwise re-tune, decided by every re-tune
        finding.
    Intel oneAPI: rewrite as for AMD ROCm, and also for NCCL's C API (COMM002) or a direct
        NCCL binding (COMM005: pynccl, ProcessGroupNCCL, torch.cuda.nccl) outside a declared
        abstraction layer, since RCCL's compatibility does not help oneCCL, and for cuDNN or
        TensorRT dependencies (DEP001/DEP002/DEP004) outside a layer. Otherwise re-tune,
        decided by every re-tune finding.
    NVIDIA part with less memory: rewrite when MEM001 drives sizes (rewrite-risk) or any
        MEM004 calibrates a batch to one SKU's HBM. Otherwise re-tune, decided by the MEM
        findings and TC005 (tiles sized for A100 shared memory).

Findings inside a declared abstraction layer are already re-tune (resolve.py), so they never
decide a rewrite for AMD.
"""

from collections.abc import Callable, Sequence
from itertools import islice

from advisor.domain.portability.rules import INFO, RE_TUNE, REWRITE_RISK
from jobs.domain.codescan.candidates import CUDNN, NCCL_DIRECT, TENSORRT, Evidence
from jobs.domain.codescan.model import TARGET_AMD, TARGET_INTEL, TARGET_SMALLER_NVIDIA
from jobs.domain.codescan.resolve import Resolved

MAX_DECIDING = 25
_MAX_EVIDENCE_PER_SIDE = 5
VENDOR_DNN_TAGS = frozenset({CUDNN, TENSORRT})

Predicate = Callable[[Resolved], bool]


def _rule(*rule_ids: str) -> Predicate:
    return lambda r: r.finding.rule_id in rule_ids


def _locked_precision(r: Resolved) -> bool:
    rule_id, severity = r.finding.rule_id, r.finding.severity
    return (
        (rule_id == "PREC001" and severity != INFO)
        or (rule_id == "PREC003" and severity == REWRITE_RISK)
        or rule_id in ("PREC004", "PREC005")
    )


def _portable_precision(r: Resolved) -> bool:
    rule_id, severity = r.finding.rule_id, r.finding.severity
    return (
        rule_id == "PREC002"
        or (rule_id == "PREC001" and severity == INFO)
        or (rule_id == "PREC003" and severity == RE_TUNE)
    )


def _locked_collectives(r: Resolved) -> bool:
    rule_id = r.finding.rule_id
    return rule_id in ("COMM001", "COMM003", "COMM005", "COMM006") or (
        rule_id == "COMM002" and not r.in_layer
    )


def _portable_collectives(r: Resolved) -> bool:
    return r.finding.rule_id == "COMM002" and r.in_layer


# (category, question, locked evidence, portable evidence among the findings)
_QUESTIONS: tuple[tuple[str, str, Predicate, Predicate], ...] = (
    (
        "TC",
        "Are matmuls going through a library or hand-tiled?",
        _rule("TC001", "TC002", "TC003", "TC005", "TC006"),
        _rule("TC004"),
    ),
    (
        "PREC",
        "Is precision a runtime policy or a compile-time constant?",
        _locked_precision,
        _portable_precision,
    ),
    (
        "COMM",
        "Do collectives go through an abstraction?",
        _locked_collectives,
        _portable_collectives,
    ),
    (
        "MEM",
        "Are memory sizes derived from a query or hard-coded?",
        lambda r: r.finding.category == "MEM",
        lambda r: False,  # only queries seen in code (evidence) are portable memory sizes
    ),
)


def _refs(resolved: Sequence[Resolved], predicate: Predicate, limit: int) -> list[str]:
    """The first `limit` findings that match, cited as "RULE file:line"."""
    return list(islice((r.ref for r in resolved if predicate(r)), limit))


def build_scorecard(resolved: Sequence[Resolved], evidence: Sequence[Evidence]) -> list[dict]:
    scorecard = []
    for category, question, is_locked, is_portable in _QUESTIONS:
        locked = _refs(resolved, is_locked, _MAX_EVIDENCE_PER_SIDE)
        portable = _refs(resolved, is_portable, _MAX_EVIDENCE_PER_SIDE)
        portable += [f"{e.file}:{e.line} {e.label}" for e in evidence if e.question == category]
        if locked and portable:
            answer = "mixed"
        elif locked:
            answer = "locked"
        elif portable:
            answer = "portable"
        else:
            answer = "no evidence"
        shown = locked[:_MAX_EVIDENCE_PER_SIDE] + portable[:_MAX_EVIDENCE_PER_SIDE]
        scorecard.append({"question": question, "answer": answer, "evidence": shown})
    return scorecard


def _rewrites_on_amd(r: Resolved) -> bool:
    return r.finding.severity == REWRITE_RISK and r.finding.category != "MEM"


def _rewrites_on_intel(r: Resolved) -> bool:
    if _rewrites_on_amd(r):
        return True
    if r.in_layer:
        return False
    rule_id = r.finding.rule_id
    return (
        rule_id == "COMM002"
        or (rule_id == "COMM005" and NCCL_DIRECT in r.tags)
        or (rule_id in ("DEP001", "DEP002", "DEP004") and bool(r.tags & VENDOR_DNN_TAGS))
    )


def _rewrites_on_smaller_nvidia(r: Resolved) -> bool:
    rule_id = r.finding.rule_id
    return (rule_id == "MEM001" and r.finding.severity == REWRITE_RISK) or rule_id == "MEM004"


def _verdict(resolved: Sequence[Resolved], rewrites: Predicate, retune_deciding: Predicate) -> dict:
    deciding = _refs(resolved, rewrites, MAX_DECIDING)
    if deciding:
        return {"verdict": "rewrite", "deciding": deciding}
    return {"verdict": RE_TUNE, "deciding": _refs(resolved, retune_deciding, MAX_DECIDING)}


def build_verdicts(resolved: Sequence[Resolved]) -> dict[str, dict]:
    def is_retune(r: Resolved) -> bool:
        return r.finding.severity == RE_TUNE

    def memory_bound(r: Resolved) -> bool:
        return r.finding.category == "MEM" or r.finding.rule_id == "TC005"

    return {
        TARGET_AMD: _verdict(resolved, _rewrites_on_amd, is_retune),
        TARGET_INTEL: _verdict(resolved, _rewrites_on_intel, is_retune),
        TARGET_SMALLER_NVIDIA: _verdict(resolved, _rewrites_on_smaller_nvidia, memory_bound),
    }
