"""What scanning one file produces before the whole upload is known: candidate findings, some
waiting on a repo-wide fact (is `ncclCheck` the repo's own macro? does the repo hold PTX?),
evidence of portable forms for the scorecard, and the facts themselves."""

import re
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
    snippet_start_line: int = 0  # text.SourceText.snippet: the lines around the finding
    snippet: str = ""


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
    python_files: set[str] = field(default_factory=set)  # paths of the Python sources read

    def own_packages(self) -> set[str]:
        """The names under which the repo's own code is imported: declared names, each
        package tree's top folder (the highest folder of a chain of folders with
        __init__.py), and what `python script.py` makes importable without one: a module
        beside it, and a folder of modules (a namespace package) at the top of the upload or
        of a src/ folder. The upload's top folder counts too, less a GitHub archive's
        branch or version suffix (cuda_tools-main/ is cuda_tools)."""
        names = set(self.packages)
        for init in self.init_files:
            parts = init.split("/")[:-1]
            while len(parts) > 1 and "/".join([*parts[:-1], "__init__.py"]) in self.init_files:
                parts = parts[:-1]
            if parts:
                names.add(parts[-1])
        tops = {path.partition("/")[0] if "/" in path else "" for path in self.python_files}
        top = tops.pop() if len(tops) == 1 else ""
        if top:
            names.add(_ARCHIVE_SUFFIX.sub("", top).replace("-", "_"))
        import_roots = {top, f"{top}/src"} if top else {"", "src"}
        for path in self.python_files:
            folder, _, name = path.rpartition("/")
            if f"{folder}/__init__.py".lstrip("/") in self.init_files:
                continue
            names.add(name.removesuffix(".py"))
            parent, _, folder_name = folder.rpartition("/")
            if folder and parent in import_roots:
                names.add(folder_name)
        return names


# The suffix GitHub and release tarballs add to a repository's folder: -main, -v1.2.0.
_ARCHIVE_SUFFIX = re.compile(r"-(?:main|master|trunk|develop|dev|v?\d[\w.]*)$")
