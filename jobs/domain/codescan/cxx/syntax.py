"""C, C++ and CUDA files: where a hit sits (code, string, comment), and the context rules of
the preprocessor.

Platform guards: code under a conditional whose condition names a HIP/ROCm macro is not
reported when the conditional has an #else/#elif (both paths exist), nor in the positive
branch of one without (that branch is AMD code). `#if 0` blocks are dead code, not reported.
"""

import re

from jobs.domain.codescan.detect import CODE, COMMENT, STRING, Hit
from jobs.domain.codescan.syntax import Node, TreeScanner, ancestors, text_of

_PLATFORM_MACRO = re.compile(
    rb"\b(?:__HIP_PLATFORM_AMD__|__HIP_PLATFORM_HCC__|USE_ROCM|__HIPCC__|__HIP__|"
    rb"__HIP_DEVICE_COMPILE__|HIP_PLATFORM_\w+|__HIP_PLATFORM_\w+|USE_HIP|WITH_HIP|"
    rb"__gfx\w+|__AMDGCN__|__SYCL_DEVICE_ONLY__|SYCL_LANGUAGE_VERSION|USE_SYCL)\b"
)
_CONDITIONALS = frozenset({"preproc_if", "preproc_ifdef", "preproc_elif", "preproc_elifdef"})
_STRINGS = frozenset({"string_literal", "raw_string_literal", "char_literal", "string_content"})
_MESSAGE_CALL = re.compile(
    rb"(?:\b|_)(?:printf|fprintf|snprintf|sprintf|puts|fputs|perror|LOG\w*|TORCH_CHECK\w*|"
    rb"AT_ERROR|TORCH_WARN\w*|assert|fail|warn\w*|error\w*)$"
)
_KERNEL_QUALIFIER = re.compile(rb"\b(?:__global__|__device__)\b")


class CxxScanner(TreeScanner):
    """A C/C++ file, parsed with the CUDA grammar (kind CUDA) or the C++ one."""

    def position(self, offset: int) -> str:
        leaf = self.root.descendant_for_byte_range(offset, offset + 1)
        if leaf is None:
            return CODE
        if leaf.type == "comment":
            return COMMENT
        if leaf.type in _STRINGS or (leaf.parent is not None and leaf.parent.type in _STRINGS):
            return STRING
        if leaf.type == "preproc_arg":
            return _position_in_macro_body(self.data, leaf.start_byte, offset)
        return CODE

    def suppression(self, hit: Hit) -> str | None:
        return _guard(hit.node)


def _position_in_macro_body(data: bytes, body_start: int, offset: int) -> str:
    """A #define's body is one unparsed token: count the quotes and comment starts before the
    hit on its line."""
    line_start = data.rfind(b"\n", body_start, offset) + 1
    before = data[max(line_start, body_start) : offset]
    if b"//" in before or b"/*" in before:
        return COMMENT
    return STRING if before.count(b'"') % 2 else CODE


def _guard(node: Node | None) -> str | None:
    came_from: Node | None = None
    for current in ancestors(node):
        if current.type in _CONDITIONALS:
            alternative = current.child_by_field_name("alternative")
            in_alternative = came_from is not None and came_from == alternative
            condition, negated = _condition(current)
            if condition.strip() == b"0" and not in_alternative:
                return "inside #if 0"
            if _PLATFORM_MACRO.search(condition):
                if alternative is not None or current.type in ("preproc_elif", "preproc_elifdef"):
                    return "inside a platform guard with an alternative branch"
                if not negated and not in_alternative:
                    return "inside a ROCm/HIP-only branch"
        came_from = current
    return None


def _condition(conditional: Node) -> tuple[bytes, bool]:
    """The condition's text, and whether the branch runs when it is false (#ifndef, #if !)."""
    if conditional.type in ("preproc_ifdef", "preproc_elifdef"):
        directive = text_of(conditional.children[0]) if conditional.children else b""
        return text_of(conditional.child_by_field_name("name")), b"ifndef" in directive
    condition = text_of(conditional.child_by_field_name("condition")).strip()
    return condition, condition.startswith(b"!")


def in_kernel_body(node: Node | None) -> bool:
    """Inside the body of a __global__ or __device__ function."""
    for current in ancestors(node):
        if current.type == "function_definition":
            body = current.child_by_field_name("body")
            head_end = body.start_byte if body is not None else current.end_byte
            head = text_of(current)[: head_end - current.start_byte]
            return bool(_KERNEL_QUALIFIER.search(head))
    return False


def runtime_selected(node: Node | None) -> bool:
    """Chosen by a run-time branch (?:, if, switch case) inside its function."""
    came_from: Node | None = None
    for current in ancestors(node):
        if current.type == "function_definition":
            return False
        if current.type in ("conditional_expression", "case_statement"):
            return True
        if current.type == "if_statement" and came_from is not None:
            condition = current.child_by_field_name("condition")
            if condition is None or came_from != condition:
                return True
        came_from = current
    return False


def enclosing(node: Node | None, *types: str) -> Node | None:
    for current in ancestors(node):
        if current.type in types:
            return current
    return None


def statement_of(node: Node | None) -> Node | None:
    """The statement, declaration or directive holding the node."""
    for current in ancestors(node):
        kind = current.type
        if kind.endswith(("_statement", "declaration")) or kind.startswith("preproc_"):
            return current
    return None


def in_message_call(node: Node | None) -> bool:
    """An argument of printf-like logging or a check's message: text, not behaviour."""
    for current in ancestors(node):
        if current.type == "call_expression":
            function = text_of(current.child_by_field_name("function"))
            if _MESSAGE_CALL.search(function):
                return True
        elif current.type == "binary_expression" and re.search(
            rb"\b(?:cout|cerr|clog)\b", text_of(current.child_by_field_name("left"))
        ):
            return True
        elif current.type.endswith("_statement") or current.type == "declaration":
            return False
    return False
