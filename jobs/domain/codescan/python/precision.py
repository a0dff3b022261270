"""Python PREC rules and the capability gates (ARCH002, or PREC004 when the gate decides
bf16/TF32), plus the portable precision forms the scorecard counts."""

import re

from advisor.domain.portability.rules import INFO
from jobs.domain.codescan import patterns
from jobs.domain.codescan.common import emit_rule, evidence, tolerance
from jobs.domain.codescan.detect import Detector, Hit
from jobs.domain.codescan.python.syntax import climb, enclosing, in_message_call, knob_assignment
from jobs.domain.codescan.syntax import Node, text_of


def _tf32_switch(hit: Hit) -> None:
    assignment = knob_assignment(hit)
    if assignment is None:
        return
    value = assignment.child_by_field_name("right")
    if value is not None and value.type in ("true", "false"):
        hit.emit("PREC001")
    else:
        hit.emit("PREC001", severity=INFO, context="value comes from configuration")


_REDUCED_PRECISION = re.compile(rb"(?i)bf16|bfloat16|tf32")
_GATE_STATEMENTS = (
    "if_statement",
    "elif_clause",
    "conditional_expression",
    "assignment",
    "return_statement",
    "assert_statement",
    "expression_statement",
)
_GATE_BODY_BYTES = 400


def _gate_text(node: Node | None) -> bytes:
    """What the gate decides: the if's condition and the start of its body, or the whole
    assignment or expression."""
    gate = enclosing(node, *_GATE_STATEMENTS)
    if gate is None:
        return b""
    if gate.type in ("if_statement", "elif_clause"):
        body = gate.child_by_field_name("consequence")
        return text_of(gate.child_by_field_name("condition")) + text_of(body)[:_GATE_BODY_BYTES]
    return text_of(gate)


def _comparison(node: Node | None) -> Node | None:
    top = climb(node, "attribute", "call", "subscript", "argument_list", "parenthesized_expression")
    parent = top.parent
    return parent if parent is not None and parent.type == "comparison_operator" else None


def _capability_gate(hit: Hit, comparison: Node) -> None:
    if _REDUCED_PRECISION.search(_gate_text(comparison)):
        hit.emit("PREC004")
    else:
        hit.emit("ARCH002")


def _capability_call(hit: Hit) -> None:
    comparison = _comparison(hit.node)
    if comparison is not None:
        _capability_gate(hit, comparison)


def _capability_name(hit: Hit) -> None:
    before = hit.scanner.data[max(hit.start - 24, 0) : hit.start]
    comparison = enclosing(hit.node, "comparison_operator")
    if comparison is None or b"version" in before.lower() or in_message_call(hit.node):
        return
    if not patterns.CAPABILITY_SOURCE.search(hit.scanner.data):
        return  # `major` is some version's: nothing here reads a compute capability
    _capability_gate(hit, comparison)


def vendor_version_gate(hit: Hit) -> None:
    if _REDUCED_PRECISION.search(_gate_text(hit.node)):
        hit.emit("PREC004")


DETECTORS = [
    Detector(
        "prec001",
        rb"\bbackends\s*\.\s*(?:cuda\s*\.\s*matmul|cudnn)\s*\.\s*allow_(?:tf32|"
        rb"fp16_reduced_precision_reduction|bf16_reduced_precision_reduction)\b",
        _tf32_switch,
        needles=(b"allow_",),
    ),
    Detector(
        "prec002",
        rb"(?<!def )\bset_float32_matmul_precision\s*\(",  # a call, not its definition
        emit_rule("PREC002"),
        needles=(b"set_float32_matmul_precision",),
    ),
    Detector(
        "arch002_call",
        rb"\bget_device_capability\b",
        _capability_call,
        needles=(b"get_device_capability",),
    ),
    Detector(
        "arch002_name",
        patterns.CAPABILITY_COMPARISON,
        _capability_name,
        gpu_only=True,
        needles=patterns.CAPABILITY_NEEDLES,
    ),
    Detector(
        "prec004",
        rb"\btorch\.version\.cuda\b|\bcuda_version\b|\bCUDA_VERSION\b",
        vendor_version_gate,
        needles=(b"torch.version.cuda", b"cuda_version", b"CUDA_VERSION"),
    ),
    Detector("prec005", patterns.TOLERANCE, tolerance, gpu_only=True, needles=(b"tol", b"_scale")),
    Detector(
        "ev_precision",
        rb"\b(?:torch\s*\.\s*autocast|torch\s*\.\s*amp\s*\.\s*autocast|is_bf16_supported)\b",
        evidence("PREC"),
        gpu_only=True,
        needles=(b"autocast", b"is_bf16_supported"),
    ),
]
