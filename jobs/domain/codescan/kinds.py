"""Which files the scanner reads, as what, and which it leaves alone.

A kind decides the parser and the rule set. C/C++ sources that use CUDA (a `__global__`,
`threadIdx`, `<<<`, "cuda" in any case, `asm`) are parsed with the CUDA grammar, the rest with
the C++ one; build files are read line by line.
"""

import re
from enum import Enum


class Kind(Enum):
    CUDA = "CUDA"
    CPP = "C++"
    PYTHON = "Python"
    REQUIREMENTS = "requirements"
    PYPROJECT = "pyproject"
    SETUP_CFG = "setup.cfg"
    CMAKE = "CMake"
    MAKE = "Makefile"
    DOCKER = "Dockerfile"
    SHELL = "shell"
    YAML = "YAML"


C_FAMILY = (Kind.CUDA, Kind.CPP)

_BY_SUFFIX = {
    ".cu": Kind.CUDA,
    ".cuh": Kind.CUDA,
    ".h": Kind.CPP,
    ".hh": Kind.CPP,
    ".hpp": Kind.CPP,
    ".hxx": Kind.CPP,
    ".inl": Kind.CPP,
    ".c": Kind.CPP,
    ".cc": Kind.CPP,
    ".cpp": Kind.CPP,
    ".cxx": Kind.CPP,
    ".py": Kind.PYTHON,
    ".cmake": Kind.CMAKE,
    ".mk": Kind.MAKE,
    ".sh": Kind.SHELL,
    ".bash": Kind.SHELL,
    ".yaml": Kind.YAML,
    ".yml": Kind.YAML,
}
_BY_NAME = {
    "pyproject.toml": Kind.PYPROJECT,
    "setup.cfg": Kind.SETUP_CFG,
    "cmakelists.txt": Kind.CMAKE,
    "makefile": Kind.MAKE,
    "gnumakefile": Kind.MAKE,
    "containerfile": Kind.DOCKER,
}
_REQUIREMENTS_NAME = re.compile(r"(?:requirements|constraints)[\w.-]*\.(?:txt|in)")
_DOCKERFILE_NAME = re.compile(r"dockerfile(?:[.-][\w.-]*)?|[\w.-]+\.dockerfile")

# Folder names whose contents are someone else's code: reported once, never scanned.
VENDORED_DIRS = frozenset(
    {"third_party", "third-party", "thirdparty", "3rdparty", "cutlass", "external", "vendor"}
    | {"node_modules", ".git"}
)
# Archives inside the upload are reported, never opened (no recursion, no second bomb).
ARCHIVE_SUFFIXES = (
    ".zip", ".tar", ".tgz", ".gz", ".bz2", ".xz", ".zst", ".7z", ".rar", ".whl", ".jar", ".egg",
)  # fmt: skip

_USES_CUDA = re.compile(rb"__global__|__device__|threadIdx|<<<|\basm\b|__asm|[Cc][Uu][Dd][Aa]")


def kind_of(path: str) -> Kind | None:
    """The kind of a file by its name alone; None for files the scanner does not read."""
    folder, _, name = path.lower().rpartition("/")
    if name in _BY_NAME:
        return _BY_NAME[name]
    if _REQUIREMENTS_NAME.fullmatch(name) or (
        folder.rpartition("/")[2] == "requirements" and name.endswith(".txt")
    ):
        return Kind.REQUIREMENTS
    if _DOCKERFILE_NAME.fullmatch(name):
        return Kind.DOCKER
    dot = name.rfind(".")
    return _BY_SUFFIX.get(name[dot:]) if dot > 0 else None


def refine_kind(kind: Kind, data: bytes) -> Kind:
    """C/C++ that uses CUDA gets the CUDA grammar, which knows `<<<>>>` and `__global__`."""
    if kind is Kind.CPP and _USES_CUDA.search(data):
        return Kind.CUDA
    return kind


def vendored_reason(root: str) -> str:
    return f"vendored third-party tree ({root.rstrip('/').rpartition('/')[2]}/)"


def vendored_root(path: str) -> str | None:
    """'a/third_party/' for 'a/third_party/x/y.h'; None outside vendored trees."""
    parts = path.split("/")
    for index, part in enumerate(parts[:-1]):
        if part.lower() in VENDORED_DIRS:
            return "/".join(parts[: index + 1]) + "/"
    return None


def is_archive_name(path: str) -> bool:
    return path.lower().endswith(ARCHIVE_SUFFIXES)
