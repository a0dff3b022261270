"""Python DEP, ARCH001/004 and TOOL rules: CUDA-only imports (guarded or not, the repo's own
package excepted), wheel pins in setup.py, build targets, CUDAExtension, nvidia-smi, NVML, NVTX."""

import re
from pathlib import PurePosixPath

from advisor.domain.portability.rules import RE_TUNE
from jobs.domain.codescan import patterns
from jobs.domain.codescan.candidates import PTX_UPGRADES, TENSORRT, UNLESS_OWN_PACKAGE
from jobs.domain.codescan.common import emit_rule
from jobs.domain.codescan.detect import IN_CODE_OR_STRING, IN_STRING, Detector, Hit
from jobs.domain.codescan.python.syntax import (
    callee,
    enclosing,
    in_message_call,
    statement_of,
    string_at,
    string_value,
)
from jobs.domain.codescan.syntax import Node, ancestors, text_of


def _is_setup_py(hit: Hit) -> bool:
    return PurePosixPath(hit.scanner.source.path).name == "setup.py"


_VERSION_PROBE = re.compile(rb"-V\b|--version")


def _package_name(value: bytes) -> str:
    return value.decode("utf-8", "replace").split(".")[0].replace("-", "_")


def _cuda_toolchain(hit: Hit) -> None:
    if enclosing(hit.node, "import_statement", "import_from_statement") is not None:
        return
    if hit.text.startswith(b"nvcc") and not _VERSION_PROBE.search(text_of(statement_of(hit.node))):
        return
    if hit.text.startswith(b"CUDAExtension"):
        _record_extension(hit)
    hit.emit("ARCH004", check=PTX_UPGRADES)


def _record_extension(hit: Hit) -> None:
    """The extension module a CUDAExtension builds is the repo's own (DEP001 ignores it)."""
    call = enclosing(hit.node, "call")
    arguments = call.child_by_field_name("arguments") if call is not None else None
    for argument in arguments.named_children if arguments is not None else []:
        value = argument
        if argument.type == "keyword_argument":
            if text_of(argument.child_by_field_name("name")) != b"name":
                continue
            value = argument.child_by_field_name("value")
        if value is not None and value.type == "string":
            hit.scanner.facts.packages.add(_package_name(string_value(value)))
        return


# setup() keywords and find_packages() calls that name the repo's own code, never a dependency:
# a CUDA library's name in `find_packages(exclude=["flash_attn"])` is not a wheel pin.
_OWN_CODE_KEYWORDS = frozenset(
    {b"name", b"packages", b"py_modules", b"package_dir", b"package_data"}
    | {b"exclude", b"exclude_package_data", b"include"}
)
_PACKAGE_FINDERS = re.compile(rb"(?:^|\.)find_(?:namespace_)?packages$")
_DECLARED_PACKAGES = (b"packages", b"py_modules")


def _setup_name(hit: Hit) -> None:
    """The names setup() gives the repo's own code (name=, packages=[...], py_modules=[...])
    are its own packages (DEP001 ignores their imports)."""
    if not _is_setup_py(hit):
        return
    call = enclosing(hit.node, "call")
    arguments = call.child_by_field_name("arguments") if call is not None else None
    for argument in arguments.named_children if arguments is not None else []:
        if argument.type != "keyword_argument":
            continue
        value = argument.child_by_field_name("value")
        keyword = text_of(argument.child_by_field_name("name"))
        if value is None:
            continue
        if keyword == b"name" and value.type == "string":
            hit.scanner.facts.packages.add(_package_name(string_value(value)))
        elif keyword in _DECLARED_PACKAGES and value.type in ("list", "tuple"):
            for item in value.named_children:
                if item.type == "string":
                    hit.scanner.facts.packages.add(_package_name(string_value(item)))


def _names_own_code(string: Node | None) -> bool:
    """A string inside an own-code keyword (name=, packages=, exclude=...) or a
    find_packages() call."""
    for current in ancestors(string):
        if current.type == "keyword_argument":
            if text_of(current.child_by_field_name("name")) in _OWN_CODE_KEYWORDS:
                return True
        elif current.type == "call" and _PACKAGE_FINDERS.search(callee(current)):
            return True
        elif current.type.endswith("statement"):
            return False
    return False


_CUDA_ONLY_TOP = frozenset(
    {"apex", "amp_C", "flash_attn", "bitsandbytes", "xformers", "cupy", "cupyx", "pycuda"}
    | {"tensorrt", "transformer_engine", "flashinfer"}
)
_CUDA_ONLY_NESTED = ("numba.cuda", "nvidia.dali")
_IMPORT_ERRORS = re.compile(rb"\b(?:ImportError|ModuleNotFoundError|Exception|BaseException)\b")
_AVAILABILITY = re.compile(rb"(?i)available|installed|find_spec|\bhas_|_AVAILABLE\b")


def _imported_modules(statement: Node) -> list[str]:
    """Dotted module paths an import statement brings in (relative imports: none)."""
    if statement.type == "import_statement":
        names = statement.children_by_field_name("name")
        return [text_of(n).split(b" ")[0].decode() for n in names]
    module = statement.child_by_field_name("module_name")
    if module is None or module.type == "relative_import":
        return []
    base = text_of(module).decode()
    names = [text_of(n).split(b" ")[0].decode() for n in statement.children_by_field_name("name")]
    return [base, *(f"{base}.{name}" for name in names)]


def _cuda_only(module: str) -> bool:
    top = module.split(".")[0]
    return (
        top in _CUDA_ONLY_TOP
        or top.startswith("flash_attn")
        or top.endswith("_cuda")
        or any(module == nested or module.startswith(nested + ".") for nested in _CUDA_ONLY_NESTED)
    )


def _has_fallback(clause: Node) -> bool:
    block = next((child for child in clause.named_children if child.type == "block"), None)
    statements = block.named_children if block is not None else []
    return any(statement.type != "raise_statement" for statement in statements)


def _import_guard(node: Node) -> str | None:
    """Why an import is optional: try/except ImportError with a fallback, or an `if` that
    checks availability first."""
    came_from: Node | None = None
    for current in ancestors(node):
        if current.type == "try_statement" and came_from == current.child_by_field_name("body"):
            for clause in current.named_children:
                caught = text_of(clause).split(b":")[0]
                catches_import_errors = caught.strip() == b"except" or _IMPORT_ERRORS.search(caught)
                if (
                    clause.type == "except_clause"
                    and catches_import_errors
                    and _has_fallback(clause)
                ):
                    return "inside try/except ImportError with a fallback"
        elif current.type == "if_statement" and came_from != current.child_by_field_name(
            "condition"
        ):
            if _AVAILABILITY.search(text_of(current.child_by_field_name("condition"))):
                return "inside an availability check"
        elif current.type in ("function_definition", "class_definition"):
            return None
        came_from = current
    return None


def _cuda_only_import(hit: Hit) -> None:
    statement = enclosing(hit.node, "import_statement", "import_from_statement")
    if statement is None:
        return
    guard = _import_guard(statement)
    for module in _imported_modules(statement):
        if not _cuda_only(module):
            continue
        top = module.split(".")[0]
        details = {"severity": RE_TUNE, "context": guard} if guard else {}
        tags = frozenset({TENSORRT}) if top == "tensorrt" else frozenset()
        hit.emit("DEP001", subject=top, check=UNLESS_OWN_PACKAGE, tags=tags, **details)


def _wheel_pin(hit: Hit) -> None:
    """DEP002 in setup.py's requirement strings (not the names of its own code)."""
    if not _is_setup_py(hit) or _names_own_code(string_at(hit)):
        return
    hit.emit("DEP002", tags=frozenset({TENSORRT}) if b"tensorrt" in hit.text else frozenset())


def _pynvml_import(hit: Hit) -> None:
    if enclosing(hit.node, "import_statement", "import_from_statement") is not None:
        hit.emit("TOOL002")


def _nvidia_smi(hit: Hit) -> None:
    if not in_message_call(hit.node):
        hit.emit("TOOL001")


DETECTORS = [
    Detector("tool001", rb"nvidia-smi", _nvidia_smi, IN_STRING, needles=(b"nvidia-smi",)),
    Detector("tool002_import", rb"\bpynvml\b", _pynvml_import, needles=(b"pynvml",)),
    Detector("tool002", rb"\bnvml[A-Z]\w*\s*\(", emit_rule("TOOL002"), needles=(b"nvml",)),
    Detector(
        "tool003",
        rb"\bcudaProfilerStart\b",
        emit_rule("TOOL003"),
        needles=(b"cudaProfilerStart",),
    ),
    Detector(
        "arch001",
        rb"-arch[= ]sm_\d+|-gencode\b|--generate-code\b|\barch=compute_\d+|"
        rb"\bCMAKE_CUDA_ARCHITECTURES\b|\bTORCH_CUDA_ARCH_LIST\b|_CUDA_ARCHS?\b",
        emit_rule("ARCH001"),
        IN_CODE_OR_STRING,
        needles=(b"-arch", b"-gencode", b"--generate-code", b"arch=compute", b"CUDA_ARCH"),
    ),
    Detector(
        "arch004",
        rb"\bCUDAExtension\s*\(|\bCUDA_HOME\b|\bnvcc\b",
        _cuda_toolchain,
        IN_CODE_OR_STRING,
        needles=(b"CUDAExtension", b"CUDA_HOME", b"nvcc"),
    ),
    Detector("setup", rb"\bsetup\s*\(", _setup_name, needles=(b"setup",)),
    Detector(
        "dep001",
        rb"\b(?:apex|amp_C|flash_attn\w*|bitsandbytes|xformers|cupyx?|pycuda|numba|nvidia|"
        rb"tensorrt|transformer_engine|flashinfer)\b|(?<=\w)_cuda\b",
        _cuda_only_import,
        needles=(
            b"apex",
            b"amp_C",
            b"flash_attn",
            b"bitsandbytes",
            b"xformers",
            b"cupy",
            b"pycuda",
            b"numba",
            b"nvidia",
            b"tensorrt",
            b"transformer_engine",
            b"flashinfer",
            b"_cuda",
        ),
    ),
    Detector(
        "dep002",
        patterns.WHEEL_PINS,
        _wheel_pin,
        IN_STRING,
        needles=patterns.WHEEL_PIN_NEEDLES,
    ),
]
