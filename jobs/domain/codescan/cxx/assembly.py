"""Inline assembly: PTX is TC002 (tensor-core and async-copy instructions), COMM003 (multimem),
ASM001 (anything else), plus PREC003 for cvt.rna.tf32; x86/ARM asm is left alone. ASM002:
cache-hint intrinsics. A repo holding PTX makes its CUDAExtension rewrite-risk (ARCH004)."""

import re

from jobs.domain.codescan import patterns
from jobs.domain.codescan.common import emit_rule
from jobs.domain.codescan.cxx.syntax import enclosing
from jobs.domain.codescan.detect import Detector, Hit
from jobs.domain.codescan.syntax import text_of

# PTX, not m68k's move.l or LoongArch's ld.d: an instruction with a PTX type or state-space
# suffix, or a PTX special register.
_PTX_INSTRUCTION = re.compile(
    rb"\b[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*\.(?:[usbf](?:8|16|32|64)|f16x2|bf16x2|bf16|pred|tf32|"
    rb"e4m3|e5m2|global|shared|local|const|param|sync|aligned|acquire|release|relaxed|gpu|sys|"
    rb"cta|gl|x[124]|trans)\b|%(?:laneid|warpid|smid|clock64|clock|globaltimer)\b"
)
_TENSOR_CORE_PTX = re.compile(rb"\b(?:mma\.sync|wgmma\.|ldmatrix|stmatrix|cp\.async)")
_MULTIMEM_PTX = re.compile(rb"\bmultimem\.")
_TF32_PTX = re.compile(rb"\bcvt\.rna\.tf32")
_STRING_BODY = re.compile(rb'"((?:[^"\\\n]|\\.)*)"')


def _assembly_text(hit: Hit) -> bytes:
    expression = enclosing(hit.node, "gnu_asm_expression")
    if expression is not None:
        source = text_of(expression.child_by_field_name("assembly_code"))
    else:  # inside a #define body, or code the grammar could not parse
        open_index = hit.scanner.data.find(b"(", hit.end, hit.end + 64)
        arguments = (
            patterns.split_arguments(hit.scanner.data, open_index) if open_index > 0 else None
        )
        source = arguments[0] if arguments else b""
    return b"".join(_STRING_BODY.findall(source))


def _asm(hit: Hit) -> None:
    assembly = _assembly_text(hit)
    if not _PTX_INSTRUCTION.search(assembly) or hit.scanner.suppression(hit):
        return
    line = hit.scanner.source.row_of(hit.start) + 1
    hit.scanner.facts.ptx_sites.append(f"{hit.scanner.source.path}:{line}")
    if _TENSOR_CORE_PTX.search(assembly):
        hit.emit("TC002")
    elif _MULTIMEM_PTX.search(assembly):
        hit.emit("COMM003")
    else:
        hit.emit("ASM001")
    if _TF32_PTX.search(assembly):
        hit.emit("PREC003")


DETECTORS = [
    Detector("asm", rb"\b(?:asm|__asm__|__asm)\b", _asm, needles=(b"asm",)),
    Detector(
        "asm002",
        rb"\b__(?:ldg|ldcs|ldcg|ldca|ldlu|ldcv|stcs|stcg|stwt|stwb)\s*\(",
        emit_rule("ASM002"),
        needles=(b"__ld", b"__st"),
    ),
]
