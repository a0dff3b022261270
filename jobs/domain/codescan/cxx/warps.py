"""C/C++/CUDA WARP rules: warp-size constants, 32-bit lane masks (and the repo's own names
for 0xffffffff), lane arithmetic fixed to 32."""

import re

from jobs.domain.codescan import patterns
from jobs.domain.codescan.candidates import IF_FULL_MASK_NAME
from jobs.domain.codescan.common import emit_rule
from jobs.domain.codescan.cxx.syntax import enclosing
from jobs.domain.codescan.detect import Detector, Hit
from jobs.domain.codescan.syntax import Node, ancestors, text_of

_WARP_SIZE_NAME = re.compile(rb"(?i)warp_?size")
_THIRTY_TWO = re.compile(rb"\(?\s*32[uU]?\s*\)?")


def _warp_size_constant(hit: Hit) -> None:
    for current in ancestors(hit.node):
        kind = current.type
        if kind == "preproc_def":
            name = text_of(current.child_by_field_name("name"))
            value = text_of(current.child_by_field_name("value")).strip()
            if _WARP_SIZE_NAME.search(name) and _THIRTY_TWO.fullmatch(value):
                hit.emit("WARP001")
            return
        if kind == "enumerator" or (
            kind == "declaration" and re.search(rb"\b(?:constexpr|const)\b", text_of(current))
        ):
            hit.emit("WARP001")
            return
        if kind.endswith(("parameter_declaration", "_statement", "function_definition")):
            return  # a template/function parameter default is the portable form


_FULL_MASK = re.compile(
    rb"0x[fF]{8}[uU]?[lL]{0,2}|~0[uU]?[lL]{0,2}|-1|"
    rb"(?:\(\s*(?:unsigned|unsigned\s+int|uint32_t|uint)\s*\)|(?:unsigned|uint32_t|uint))"
    rb"\s*\(?-1\)?|"
    rb"static_cast<\s*(?:unsigned|unsigned\s+int|uint32_t)\s*>\s*\(\s*-1\s*\)"
)
_NAME = re.compile(rb"[A-Za-z_]\w*")


def _lane_mask_intrinsic(hit: Hit) -> None:
    arguments = patterns.split_arguments(hit.scanner.data, hit.end - 1)
    if not arguments:
        return
    mask = arguments[0]
    if _FULL_MASK.fullmatch(mask) or mask.startswith(b"__activemask"):
        hit.emit("WARP002")
    elif _NAME.fullmatch(mask):
        hit.emit("WARP002", subject=mask.decode(), check=IF_FULL_MASK_NAME)


def _full_mask_value(hit: Hit) -> None:
    """Record names defined as 0xffffffff, so WARP002 knows `FINAL_MASK` is a full mask."""
    for current in ancestors(hit.node):
        if current.type in ("preproc_def", "enumerator"):
            hit.scanner.facts.full_masks.add(text_of(current.child_by_field_name("name")).decode())
            return
        if current.type == "init_declarator":
            declarator = text_of(current.child_by_field_name("declarator"))
            hit.scanner.facts.full_masks.add(declarator.decode())
            return
        if current.type in ("argument_list", "expression_statement", "compound_statement"):
            return


_LANE_OPERAND = re.compile(rb"threadIdx|\btid\b|[Ll]ane|[Ww]arp|WARP|[Tt]hread|THREAD")
_HALVING = re.compile(rb"/=\s*2\b|>>=\s*1\b|=\s*\w+\s*/\s*2\b|=\s*\w+\s*>>\s*1\b")
_DOUBLING_TO_32 = re.compile(rb"\*=\s*2\b|<<=\s*1\b")


# `32 * n / 4`, `tid * 32 / 8`: 32 bits a word over 4 (or 2, 8) bits a packed value is a
# quantised-weight stride, not a warp's width.
_PACKING_DIVISOR = re.compile(rb"\s*(?:/\s*[248]|>>\s*[123])(?![\w.])")
_MULTIPLY_BY_32 = re.compile(rb"\*\s*32|32\s*\*")


def _packs_bits(hit: Hit, expression: Node | None) -> bool:
    """A product with 32 that is then divided by 2, 4 or 8 bits a value."""
    if not _MULTIPLY_BY_32.fullmatch(hit.text.strip()):
        return False
    if expression is None:  # a #define body: the text after the product's operand
        after = hit.scanner.data[hit.end : hit.scanner.data.find(b"\n", hit.end)]
        return bool(re.match(rb"\s*[\w.]+\)?" + _PACKING_DIVISOR.pattern, after))
    product = expression
    while product.parent is not None and product.parent.type == "parenthesized_expression":
        product = product.parent
    parent = product.parent
    if parent is None or parent.type != "binary_expression":
        return False
    if parent.child_by_field_name("left") != product:
        return False
    divisor = hit.scanner.data[product.end_byte : parent.end_byte]
    return bool(_PACKING_DIVISOR.fullmatch(divisor))


def _lane_arithmetic(hit: Hit) -> None:
    expression = enclosing(hit.node, "binary_expression")
    if expression is not None and expression.start_byte <= hit.start < expression.end_byte:
        operands = text_of(expression)
    else:  # a #define body: the line up to the operator
        expression = None
        line_start = hit.scanner.data.rfind(b"\n", 0, hit.start) + 1
        operands = hit.scanner.data[line_start : hit.end]
    if _LANE_OPERAND.search(operands) and not _packs_bits(hit, expression):
        hit.emit("WARP003")


def _butterfly_loop(hit: Hit) -> None:
    loop = enclosing(hit.node, "for_statement")
    if loop is None:
        return
    start = text_of(loop.child_by_field_name("initializer"))
    condition = text_of(loop.child_by_field_name("condition"))
    update = text_of(loop.child_by_field_name("update"))
    from_16 = re.search(rb"=\s*16\b", start) and _HALVING.search(update)
    to_32 = re.search(rb"<\s*32\b|<=\s*16\b", condition) and _DOUBLING_TO_32.search(update)
    if from_16 or to_32:
        hit.emit("WARP003")


def _width_assert(hit: Hit) -> None:
    if re.search(rb"(?i)warp|thread|lane", hit.text):
        hit.emit("WARP003")


DETECTORS = [
    Detector(
        "warp001",
        rb"(?:WARP_?SIZE|[Ww]arp_?[Ss]ize)\w*\s*(?:=\s*)?\(?\s*32[uU]?\b",
        _warp_size_constant,
        needles=(b"WARP", b"arp"),
    ),
    Detector(
        "warp002",
        rb"\b(?:__shfl\w*_sync|__ballot_sync|__any_sync|__all_sync|__match_\w+_sync|"
        rb"__reduce_\w+_sync)\s*\(",
        _lane_mask_intrinsic,
        needles=(b"_sync",),
    ),
    Detector(
        "warp002_active",
        rb"\b__activemask\s*\(",
        emit_rule("WARP002"),
        needles=(b"__activemask",),
    ),
    Detector("full_mask", rb"\b0x[fF]{8}[uU]?\b", _full_mask_value, needles=(b"0xf", b"0xF")),
    Detector(
        "warp003_op",
        rb"(?:%\s*32|&\s*31|&\s*0x1[fF]|>>\s*5|/\s*32|\*\s*32)(?![.\w])|\b32\s*\*(?!\*)",
        _lane_arithmetic,
        needles=(b"32", b"31", b"0x1", b">>"),
    ),
    Detector(
        "warp003_for",
        rb"\bfor\s*\(\s*(?:(?:unsigned\s+)?(?:int|unsigned|auto|uint32_t|int32_t|size_t)\s+)?"
        rb"\w+\s*=\s*(?:16|1)\s*;",
        _butterfly_loop,
        needles=(b"for",),
    ),
    Detector(
        "warp003_assert",
        rb"\bstatic_assert\s*\([^;]*?==\s*32(?![.\w])",
        _width_assert,
        needles=(b"static_assert",),
    ),
]
