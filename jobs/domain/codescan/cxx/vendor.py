"""C/C++/CUDA vendor APIs and gates: NCCL (COMM002, the repo's own macros excepted), NVLink
(COMM003), NVML and NVTX (TOOL002/003), vendor headers (DEP004), capability comparisons
(ARCH002) and __CUDA_ARCH__ gates (ARCH003)."""

import re
from collections.abc import Callable

from advisor.domain.portability.rules import REWRITE_RISK
from jobs.domain.codescan import patterns
from jobs.domain.codescan.candidates import CUDNN, TENSORRT, UNLESS_OWN_FUNCTION
from jobs.domain.codescan.common import emit_nvlink, emit_rule
from jobs.domain.codescan.cxx.syntax import enclosing, in_message_call
from jobs.domain.codescan.detect import Detector, Hit
from jobs.domain.codescan.syntax import Node, ancestors, text_of

_BUILD_SWITCH = re.compile(
    rb"\b(?:ENABLE|USE|WITH|DISABLE|HAS)_\w+|\b(?:use|enable|disable|allow)_\w+|getenv|"
    rb"\b(?:config|cfg|args|opts|options|params)\b"
)


def _switch_condition(node: Node | None) -> bytes | None:
    """The condition of the nearest if/?:/#if around the node, when it reads a setting."""
    for current in ancestors(node):
        if current.type in ("if_statement", "conditional_expression", "preproc_if"):
            condition = text_of(current.child_by_field_name("condition"))
        elif current.type == "preproc_ifdef":
            condition = text_of(current.child_by_field_name("name"))
        else:
            continue
        if _BUILD_SWITCH.search(condition):
            return condition
    return None


def _nvlink(hit: Hit) -> None:
    emit_nvlink(hit, _switch_condition(hit.node))


def _defines_it(node: Node | None) -> bool:
    """The hit spans a name being defined (#define f(...), f(...) { }), not a call."""
    return node is not None and node.type in ("preproc_function_def", "function_declarator")


def _vendor_call(rule_id: str) -> Callable[[Hit], None]:
    def handle(hit: Hit) -> None:
        name = hit.text.split(b"(")[0].strip().decode()
        if _defines_it(hit.node):
            hit.scanner.facts.own_functions.add(name)
        else:
            hit.emit(rule_id, subject=name, check=UNLESS_OWN_FUNCTION)

    return handle


_ARCH_COMPARISON = re.compile(rb"__CUDA_ARCH__\s*(?:[<>]=?|[!=]=)|(?:[<>]=?|[!=]=)\s*__CUDA_ARCH__")


def _capability_comparison(hit: Hit) -> None:
    before = hit.scanner.data[max(hit.start - 24, 0) : hit.start]
    if b"version" in before.lower() or in_message_call(hit.node):
        return
    if patterns.CAPABILITY_SOURCE.search(hit.scanner.data):  # else `major` is a version's
        hit.emit("ARCH002")


def _has_else(conditional: Node) -> bool:
    alternative = conditional.child_by_field_name("alternative")
    while alternative is not None:
        if alternative.type == "preproc_else":
            return True
        alternative = alternative.child_by_field_name("alternative")
    return False


def _cuda_arch_gate(hit: Hit) -> None:
    gate = enclosing(hit.node, "preproc_if", "preproc_elif")
    if gate is None or gate.start_byte > hit.start:
        return
    if not _ARCH_COMPARISON.search(text_of(gate.child_by_field_name("condition"))):
        return
    if _has_else(gate):
        hit.emit("ARCH003")
    else:
        hit.emit("ARCH003", severity=REWRITE_RISK, context="no #else: no path for other devices")


def _vendor_header(hit: Hit) -> None:
    tags = set()
    if b"cudnn" in hit.text:
        tags.add(CUDNN)
    if b"NvInfer" in hit.text:
        tags.add(TENSORRT)
    hit.emit("DEP004", tags=frozenset(tags))


DETECTORS = [
    Detector(
        "comm002_inc",
        rb"#[ \t]*include[ \t]*[<\"]nccl\.h[>\"]",
        emit_rule("COMM002"),
        needles=(b"nccl.h",),
    ),
    Detector(
        "comm003",
        rb"\b(?:multimem_\w+|nvmlDeviceGetNvLink\w*|is_full_nvlink|cudaIpc\w*MemHandle\w*|"
        rb"can_device_access_peer|cudaDeviceCanAccessPeer)\b",
        _nvlink,
        needles=(
            b"multimem_",
            b"NvLink",
            b"nvlink",
            b"MemHandle",
            b"ccess_peer",
            b"AccessPeer",
        ),
    ),
    Detector("comm002", rb"\bnccl[A-Z]\w*\s*\(", _vendor_call("COMM002"), needles=(b"nccl",)),
    Detector(
        "tool002_inc",
        rb"#[ \t]*include[ \t]*[<\"]nvml\.h[>\"]",
        emit_rule("TOOL002"),
        needles=(b"nvml.h",),
    ),
    Detector("tool002", rb"\bnvml[A-Z]\w*\s*\(", _vendor_call("TOOL002"), needles=(b"nvml",)),
    Detector(
        "tool003",
        rb"\b(?:nvtxRange\w*|cudaProfilerStart)\b",
        emit_rule("TOOL003"),
        needles=(b"nvtxRange", b"cudaProfilerStart"),
    ),
    Detector(
        "arch002",
        patterns.CAPABILITY_COMPARISON,
        _capability_comparison,
        gpu_only=True,
        needles=patterns.CAPABILITY_NEEDLES,
    ),
    Detector(
        "arch003",
        rb"^[ \t]*#[ \t]*(?:if|elif)\b[^\n]*__CUDA_ARCH__",
        _cuda_arch_gate,
        needles=(b"__CUDA_ARCH__",),
    ),
    Detector(
        "dep004",
        rb"#[ \t]*include[ \t]*[<\"](?:[\w/]*/)?(?:cudnn\.h|cudnn_frontend\w*\.h|"
        rb"NvInfer\w*\.h|cusparseLt\.h|nvshmem\w*\.h|cufile\.h)[>\"]",
        _vendor_header,
        needles=(b"cudnn", b"NvInfer", b"cusparseLt", b"nvshmem", b"cufile"),
    ),
]
