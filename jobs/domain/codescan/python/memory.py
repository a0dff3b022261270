"""Python MEM rules (capacities, peaks, SM counts, SKU names, SKU-calibrated batches) and
Triton launch tiles (TC005), plus the memory queries and library GEMMs the scorecard counts."""

import re

from jobs.domain.codescan import patterns
from jobs.domain.codescan.common import (
    capacity_detectors,
    emit_rule,
    evidence,
    sku_and_sm_count_detectors,
    sku_calibrated_batch,
)
from jobs.domain.codescan.detect import Detector, Hit
from jobs.domain.codescan.python.syntax import assigned_name, enclosing, in_message_call
from jobs.domain.codescan.syntax import text_of

_CONSTANT_PARTS = frozenset(
    {"integer", "float", "binary_operator", "parenthesized_expression", "unary_operator"}
)


def _drives_sizes(hit: Hit) -> bool:
    """The capacity feeds a computation: it meets a variable in arithmetic or a comparison,
    is passed to a call, or is assigned to a name that the file reads again."""
    node = hit.node
    if node.type in ("string_start", "string_content", "string_end"):
        node = node.parent
    while node.parent is not None and node.parent.type in _CONSTANT_PARTS:
        node = node.parent
        if node.type == "binary_operator" and patterns.has_identifier(text_of(node)):
            return True
    parent = node.parent
    if parent is None:
        return False
    if parent.type in ("comparison_operator", "boolean_operator"):
        return True
    if parent.type in ("argument_list", "keyword_argument"):
        return not in_message_call(parent)
    name = assigned_name(node)
    if name is not None:
        return len(re.findall(rb"\b%s\b" % re.escape(name), hit.scanner.data)) > 1
    return False


def _sku_name(hit: Hit) -> None:
    keyword = enclosing(hit.node, "keyword_argument")
    if keyword is not None and text_of(keyword.child_by_field_name("name")) == b"dtype":
        return  # numpy's "V100" is a 100-byte void dtype
    if not in_message_call(hit.node):
        hit.emit("MEM005")


def _sm_count(hit: Hit) -> None:
    line = hit.scanner.source.line_bytes(hit.scanner.source.row_of(hit.start))
    if patterns.SM_COUNT_CONTEXT.search(line):
        hit.emit("MEM006")


def _triton_launch_tile(hit: Hit) -> None:
    """`kernel[grid](..., BLOCK_M=128)`: a tile fixed at the launch, not autotuned."""
    argument = enclosing(hit.node, "keyword_argument")
    call = enclosing(argument, "call")
    function = call.child_by_field_name("function") if call is not None else None
    if function is not None and function.type == "subscript":
        hit.emit("TC005")


DETECTORS = [
    *capacity_detectors(in_message_call, _drives_sizes),
    Detector(
        "mem003", patterns.ON_CHIP_BYTES, emit_rule("MEM003"), gpu_only=True, needles=(b"1024",)
    ),
    Detector(
        "mem004",
        rb"\b(?:batch_size|micro_batch_size|global_batch_size|train_batch_size|"
        rb"per_device_train_batch_size|gradient_accumulation_steps|grad_accum\w*|"
        rb"accumulation_steps)\s*[=:]\s*\d",
        sku_calibrated_batch,
        gpu_only=True,
        needles=(b"batch", b"accum"),
    ),
    *sku_and_sm_count_detectors(_sku_name, _sm_count),
    Detector(
        "tc005",
        rb"\b(?:BLOCK_(?:SIZE_)?[MNK]|num_warps|num_stages)\s*=\s*\d+",
        _triton_launch_tile,
        needles=(b"BLOCK_", b"num_"),
    ),
    Detector(
        "ev_gemm",
        rb"\b(?:torch\s*\.\s*(?:matmul|bmm|mm|addmm|baddbmm|einsum)|F\s*\.\s*linear|"
        rb"nn\s*\.\s*Linear|scaled_dot_product_attention)\b",
        evidence("TC"),
        gpu_only=True,
        needles=(b"torch", b"linear", b"Linear", b"scaled_dot_product_attention"),
    ),
    Detector(
        "ev_memory",
        rb"\b(?:mem_get_info|get_device_properties|total_memory|find_executable_batch_size)\b",
        evidence("MEM"),
        gpu_only=True,
        needles=(
            b"mem_get_info",
            b"get_device_properties",
            b"total_memory",
            b"find_executable_batch_size",
        ),
    ),
]
