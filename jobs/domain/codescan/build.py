"""Build and deployment files read line by line: requirements, pyproject.toml, setup.cfg,
CMake, Makefiles, Dockerfiles, shell scripts and YAML (ARCH001/004, DEP002/003, COMM003/004/006,
MEM004, DEV006, TOOL001).

A hit after a comment marker on its line does not count: `#` at the start of a word (after
the start of the line or a blank) outside quotes; in a Dockerfile only a whole-line `#`; in
a Makefile any unescaped `#`; in setup.cfg also a line starting with `;`.
"""

import re

from jobs.domain.codescan.candidates import PTX_UPGRADES, TENSORRT
from jobs.domain.codescan.common import eight_gpu_island, emit_rule, sku_calibrated_batch
from jobs.domain.codescan.detect import CODE, COMMENT, Detector, DetectorSet, FileScanner, Hit
from jobs.domain.codescan.kinds import Kind
from jobs.domain.codescan.patterns import WHEEL_PINS


class BuildScanner(FileScanner):
    def position(self, offset: int) -> str:
        line_start = self.data.rfind(b"\n", 0, offset) + 1
        before = self.data[line_start:offset]
        return COMMENT if _comment_starts_in(self.kind, before) else CODE


def _comment_starts_in(kind: Kind, before: bytes) -> bool:
    stripped = before.lstrip()
    if stripped.startswith(b"#") or (kind is Kind.SETUP_CFG and stripped.startswith(b";")):
        return True
    if kind is Kind.DOCKER:
        return False
    if kind is Kind.MAKE:
        return bool(re.search(rb"(?<!\\)#", before))
    quote = None
    for index, char in enumerate(before):
        if quote is not None:
            quote = None if char == quote else quote
        elif char in b"\"'":
            quote = char
        elif char == ord("#") and (index == 0 or before[index - 1 : index].isspace()):
            return True
    return False


def _cuda_toolchain(hit: Hit) -> None:
    hit.emit("ARCH004", check=PTX_UPGRADES)


# Keys of pyproject.toml and setup.cfg whose values name the project's own code: its name, its
# packages, and package-finder include/exclude lists (`exclude = ["flash_attn*"]`).
_OWN_CODE_KEYS = frozenset(
    {b"name", b"packages", b"py-modules", b"py_modules", b"package-dir", b"package_dir"}
    | {b"include", b"exclude", b"package-data", b"package_data", b"exclude-package-data"}
)
# A `key =` at a line's start; a value continued on later lines (an array in TOML, indented
# lines in setup.cfg) belongs to the last one.
_KEY = re.compile(rb"(?m)^[ \t]*\"?([\w.-]+?)\"?[ \t]*=(?!=)")


def _names_own_code(hit: Hit) -> bool:
    if hit.scanner.kind not in (Kind.PYPROJECT, Kind.SETUP_CFG):
        return False
    line_end = hit.scanner.data.find(b"\n", hit.start)
    keys = _KEY.findall(hit.scanner.data, 0, line_end if line_end != -1 else len(hit.scanner.data))
    return bool(keys) and keys[-1].rpartition(b".")[2] in _OWN_CODE_KEYS


def _wheel_pin(hit: Hit) -> None:
    if _names_own_code(hit):
        return
    tags = frozenset({TENSORRT}) if b"tensorrt" in hit.text.lower() else frozenset()
    hit.emit("DEP002", tags=tags)


def _project_name(hit: Hit) -> None:
    """[project] name = "..." in pyproject.toml: the repo's own package (DEP001 ignores it)."""
    sections = re.findall(rb"(?m)^\s*\[([^\]]+)\]", hit.scanner.data[: hit.start])
    if sections and sections[-1].strip() == b"project":
        value = re.search(rb"[\"']([^\"']+)", hit.text)
        if value is not None:
            hit.scanner.facts.packages.add(value.group(1).decode().replace("-", "_"))


_ARCH001 = Detector(
    "arch001",
    rb"-arch[= ]?sm_\d+|-gencode\b|--generate-code\b|\barch=compute_\d+|"
    rb"\bCMAKE_CUDA_ARCHITECTURES\b|\bTORCH_CUDA_ARCH_LIST\b|_CUDA_ARCHS?\b|"
    rb"\bCUDA_ARCH_LIST\b",
    emit_rule("ARCH001"),
)
_ARCH004 = Detector(
    "arch004",
    rb"\bproject\s*\([^)]*\bLANGUAGES\b[^)]*\bCUDA\b|\bfind_package\s*\(\s*CUDA(?:Toolkit)?\b|"
    rb"\benable_language\s*\(\s*CUDA\b|\bCUDA_HOME\b|\bnvcc\s+(?:-V|--version)\b",
    _cuda_toolchain,
)
_COMM003 = Detector("comm003", rb"\bnvidia-smi\s+topo\b", emit_rule("COMM003"))
_TOOL001 = Detector("tool001", rb"\bnvidia-smi\b", emit_rule("TOOL001"))
_DEV006 = Detector("dev006", rb"\bCUDA_VISIBLE_DEVICES\b", emit_rule("DEV006"))
_COMM004 = Detector(
    "comm004",
    rb"(?<![\w$])(?:TORCH_NCCL_\w+|NCCL_\w+|NVSHMEM_\w+|CUDA_DEVICE_MAX_CONNECTIONS)\s*[=:]|"
    rb"^\s*ENV\s+(?:TORCH_NCCL_|NCCL_|NVSHMEM_|CUDA_DEVICE_MAX_CONNECTIONS)",
    emit_rule("COMM004"),
)
_COMM006 = Detector(
    "comm006",
    rb"(?:--tensor[-_]model[-_]parallel[-_]size|--tp|\bTP_SIZE|\bTP|"
    rb"\btensor_model_parallel_size)[=\s]+8\b",
    eight_gpu_island,
)
_MEM004 = Detector(
    "mem004",
    rb"(?:--(?:micro-|global-|train-)?batch-size|--gradient-accumulation-steps|"
    rb"\b(?:MICRO_BATCH(?:_SIZE)?|GLOBAL_BATCH(?:_SIZE)?|BATCH_SIZE|GRAD_ACC\w*|batch_size|"
    rb"micro_batch_size|global_batch_size|train_batch_size|gradient_accumulation_steps))"
    rb"[=:\s]\s*\d",
    sku_calibrated_batch,
)
_DEP002 = Detector("dep002", WHEEL_PINS, _wheel_pin)
_DEP003 = Detector(
    "dep003",
    rb"^[ \t]*(?i:FROM)[ \t]+(?:--platform=\S+[ \t]+)?(?:docker\.io/)?"
    rb"(?:nvidia/cuda|nvcr\.io/nvidia/)",
    emit_rule("DEP003"),
)
_PROJECT_NAME = Detector("project_name", rb"^[ \t]*name[ \t]*=[ \t]*[\"'][^\"'\n]+", _project_name)

BUILD_DETECTORS = {
    Kind.REQUIREMENTS: DetectorSet([_DEP002]),
    Kind.PYPROJECT: DetectorSet([_PROJECT_NAME, _DEP002, _ARCH001]),
    Kind.SETUP_CFG: DetectorSet([_DEP002, _ARCH001]),
    Kind.CMAKE: DetectorSet([_ARCH001, _ARCH004]),
    Kind.MAKE: DetectorSet([_ARCH001, _ARCH004, _COMM003, _TOOL001, _DEV006]),
    Kind.DOCKER: DetectorSet([_DEP003, _ARCH001, _ARCH004, _COMM003, _TOOL001, _COMM004, _DEV006]),
    Kind.SHELL: DetectorSet(
        [_ARCH001, _ARCH004, _COMM003, _TOOL001, _COMM004, _COMM006, _MEM004, _DEV006]
    ),
    Kind.YAML: DetectorSet([_ARCH001, _COMM004, _MEM004, _DEV006]),
}
