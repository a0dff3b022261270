"""C/C++/CUDA MEM rules (capacities, peaks, on-chip sizes, SKU names, SM counts) and PREC005,
plus the memory queries the scorecard counts."""

import re

from jobs.domain.codescan import patterns
from jobs.domain.codescan.common import (
    capacity_detectors,
    emit_rule,
    evidence,
    sku_and_sm_count_detectors,
    tolerance,
)
from jobs.domain.codescan.cxx.syntax import enclosing, in_message_call
from jobs.domain.codescan.detect import Detector, Hit
from jobs.domain.codescan.syntax import text_of

_CONSTANT_PARTS = frozenset(
    {"number_literal", "binary_expression", "parenthesized_expression", "cast_expression"}
    | {"type_descriptor", "primitive_type", "sized_type_specifier"}
)


def _drives_sizes(hit: Hit) -> bool:
    """The capacity feeds a computation: it meets a variable in arithmetic or a comparison,
    is passed to a call, or is stored in a name that the file reads again."""
    node = hit.node
    while node.parent is not None and node.parent.type in _CONSTANT_PARTS:
        if node.parent.type == "binary_expression" and patterns.has_identifier(
            text_of(node.parent)
        ):
            return True
        node = node.parent
    parent = node.parent
    if parent is None:
        return False
    if parent.type == "argument_list":
        return not in_message_call(parent)
    name = None
    if parent.type == "init_declarator":
        name = text_of(parent.child_by_field_name("declarator"))
    elif parent.type == "preproc_def":
        name = text_of(parent.child_by_field_name("name"))
    elif parent.type == "assignment_expression":
        name = text_of(parent.child_by_field_name("left"))
    if name and re.fullmatch(rb"\w+", name):
        return len(re.findall(rb"\b%s\b" % name, hit.scanner.data)) > 1
    return False


def _sku_name(hit: Hit) -> None:
    if not in_message_call(hit.node):
        hit.emit("MEM005")


def _sm_count(hit: Hit) -> None:
    line = hit.scanner.source.line_bytes(hit.scanner.source.row_of(hit.start))
    launch = enclosing(hit.node, "kernel_call_syntax")
    if launch is not None or patterns.SM_COUNT_CONTEXT.search(line):
        hit.emit("MEM006")


DETECTORS = [
    Detector("prec005", patterns.TOLERANCE, tolerance, gpu_only=True, needles=(b"tol", b"_scale")),
    *capacity_detectors(in_message_call, _drives_sizes),
    Detector(
        "mem003",
        patterns.ON_CHIP_BYTES + rb"|\bcudaFuncAttributeMaxDynamicSharedMemorySize\s*,\s*\(?\s*\d",
        emit_rule("MEM003"),
        gpu_only=True,
        needles=(b"1024", b"MaxDynamicSharedMemorySize"),
    ),
    *sku_and_sm_count_detectors(_sku_name, _sm_count),
    Detector(
        "ev_memory",
        rb"\b(?:cudaMemGetInfo|hipMemGetInfo|cudaGetDeviceProperties|hipGetDeviceProperties|"
        rb"cudaDeviceGetAttribute|hipDeviceGetAttribute|multiProcessorCount|"
        rb"sharedMemPerBlockOptin|l2CacheSize|totalGlobalMem)\b",
        evidence("MEM"),
        gpu_only=True,
        needles=(
            b"MemGetInfo",
            b"GetDeviceProperties",
            b"DeviceGetAttribute",
            b"multiProcessorCount",
            b"sharedMemPerBlockOptin",
            b"l2CacheSize",
            b"totalGlobalMem",
        ),
    ),
]
