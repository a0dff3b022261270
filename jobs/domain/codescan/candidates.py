"""What scanning one file produces before the whole upload is known: candidate findings, some
waiting on a repo-wide fact (is `ncclCheck` the repo's own macro? does the repo hold PTX?),
evidence of portable forms for the scorecard, and the facts themselves."""

from dataclasses import dataclass, field

# Candidate.tags values the verdicts read: the decisions that read them define them.
from advisor.domain.portability.decisions import CUDNN as CUDNN
from advisor.domain.portability.decisions import NCCL_DIRECT as NCCL_DIRECT
from advisor.domain.portability.decisions import TENSORRT as TENSORRT

# Candidate.check values: which repo fact decides the candidate in resolve.py.
UNLESS_OWN_FUNCTION = "unless-own-function"  # COMM002/TOOL002 calls of the repo's own macro
UNLESS_OWN_PACKAGE = "unless-own-package"  # DEP001 imports of the repo's own package
IF_FULL_MASK_NAME = "if-full-mask-name"  # WARP002 whose mask is a named 0xffffffff
PTX_UPGRADES = "ptx-upgrades"  # ARCH004: rewrite-risk when the repo's CUDA holds PTX


@dataclass(frozen=True, slots=True)
class Candidate:
    rule_id: str
    line: int
    column: int
    code: str
    severity: str
    context: str = ""
    subject: str = ""  # the name a repo fact is looked up by (macro, module, mask)
    check: str = ""
    tags: frozenset[str] = frozenset()  # what the verdicts need to know (e.g. "cudnn")


@dataclass(frozen=True, slots=True)
class Evidence:
    """A portable form seen in code (a library GEMM, a memory query) for the scorecard."""

    question: str  # the category it answers: TC, PREC, COMM or MEM
    file: str
    line: int
    label: str


@dataclass
class FileScan:
    path: str
    language: str
    layer: str  # why the file is a declared abstraction layer, or ""
    candidates: list[Candidate] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)


@dataclass
class RepoFacts:
    own_functions: set[str] = field(default_factory=set)  # nccl*/nvml* the repo defines
    full_masks: set[str] = field(default_factory=set)  # names defined as 0xffffffff
    ptx_sites: list[str] = field(default_factory=list)  # "file:line" of inline PTX
    packages: set[str] = field(default_factory=set)  # names declared by setup.py/pyproject
    init_files: set[str] = field(default_factory=set)  # paths of __init__.py files

    def own_packages(self) -> set[str]:
        """Declared names plus each package tree's top folder (the highest folder of a chain
        of folders with __init__.py)."""
        names = set(self.packages)
        for init in self.init_files:
            parts = init.split("/")[:-1]
            while len(parts) > 1 and "/".join([*parts[:-1], "__init__.py"]) in self.init_files:
                parts = parts[:-1]
            if parts:
                names.add(parts[-1])
        return names
