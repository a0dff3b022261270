"""Python files: where a hit sits (code, string, docstring, comment) and the context rules.

A string that is a statement of its own is a docstring (module, class, function, or a bare
string used as a comment) and never produces findings. Platform guards: code under an `if`
whose condition asks for another platform (`torch.version.hip`, `is_hip()`, `is_rocm()`,
`is_xpu()`) is not reported when the `if` has an else/elif, nor in the positive branch of one
without.
"""

import re

from jobs.domain.codescan.detect import CODE, COMMENT, DOCSTRING, STRING, Hit
from jobs.domain.codescan.syntax import Node, TreeScanner, ancestors, text_of

_PLATFORM_CHECK = re.compile(
    rb"\btorch\.version\.hip\b|\bis_hip\w*|\bis_rocm\w*|\bIS_ROCM\b|\bIS_HIP\w*|\bUSE_ROCM\b|"
    rb"\bROCM\b|\bis_xpu\w*"
)
_STATEMENT_BOUNDARY = frozenset({"block", "module", "expression_statement", "decorated_definition"})
_MESSAGE_FUNCTION = re.compile(
    rb"(?:^|\.)(?:print|debug|info|warning|warn|error|exception|critical|log|write|echo|"
    rb"format|fail|skip|xfail|rank_zero_\w+|print_rank_0|logger\.\w+)$"
)
_CONFIG_SOURCE = re.compile(
    rb"\b(?:args|config|cfg|conf|opts?|options|params|hparams|settings|flags|FLAGS|env|environ|"
    rb"getenv|get|argparse|parse_args|kwargs)\b|\buse_\w+|\benable_\w+|\bdisable_\w+"
)


class PythonScanner(TreeScanner):
    """A Python file."""

    def position(self, offset: int) -> str:
        for current in ancestors(self.root.descendant_for_byte_range(offset, offset + 1)):
            kind = current.type
            if kind == "comment":
                return COMMENT
            if kind == "interpolation":
                return CODE
            if kind == "string":
                return DOCSTRING if _is_docstring(current) else STRING
            if kind in _STATEMENT_BOUNDARY or kind.endswith("statement"):
                return CODE
        return CODE

    def suppression(self, hit: Hit) -> str | None:
        came_from: Node | None = None
        for current in ancestors(hit.node):
            if current.type == "if_statement" and came_from is not None:
                condition = current.child_by_field_name("condition")
                if (
                    condition is not None
                    and came_from != condition
                    and _PLATFORM_CHECK.search(text_of(condition))
                ):
                    in_body = came_from == current.child_by_field_name("consequence")
                    has_alternative = current.child_by_field_name("alternative") is not None
                    negated = text_of(condition).lstrip().startswith(b"not ")
                    if has_alternative or (in_body and not negated):
                        return "inside a platform check"
            came_from = current
        return None


def _is_docstring(string: Node) -> bool:
    """A string that is a statement of its own (module, class or function docstring, or a
    bare string used as a comment)."""
    parent = string.parent
    if parent is not None and parent.type == "concatenated_string":
        parent = parent.parent
    return parent is not None and parent.type == "expression_statement"


def string_value(string: Node) -> bytes:
    """The literal's text without prefix and quotes (f-string interpolations kept as {...})."""
    raw = text_of(string)
    body = raw.lstrip(b"rRbBuUfF")
    quote = body[:3] if body[:3] in (b'"""', b"'''") else body[:1]
    return body[len(quote) : len(body) - len(quote)]


# Wrappers a value passes through on its way to where it is used: ("cuda" if x else "cpu").
TRANSPARENT = ("conditional_expression", "parenthesized_expression")


def enclosing(node: Node | None, *types: str) -> Node | None:
    for current in ancestors(node):
        if current.type in types:
            return current
    return None


def climb(node: Node, *through: str) -> Node:
    """The highest ancestor reached through nodes of the given types only."""
    while node.parent is not None and node.parent.type in through:
        node = node.parent
    return node


def string_at(hit: Hit) -> Node | None:
    """The string literal a hit is in."""
    return enclosing(hit.node, "string")


def callee(call: Node) -> bytes:
    return text_of(call.child_by_field_name("function"))


def in_message_call(node: Node | None) -> bool:
    """Inside print/logging arguments, a raise or an assert: text, not behaviour."""
    for current in ancestors(node):
        kind = current.type
        if kind == "call" and _MESSAGE_FUNCTION.search(callee(current)):
            return True
        if kind in ("raise_statement", "assert_statement"):
            return True
        if kind in _STATEMENT_BOUNDARY or kind.endswith("statement"):
            return False
    return False


def statement_of(node: Node | None) -> Node | None:
    for current in ancestors(node):
        if current.type.endswith("statement") or current.type in ("if_statement", "elif_clause"):
            return current
    return None


def scope_of(node: Node | None) -> Node | None:
    """The function body or module that names in the node's statement belong to."""
    for current in ancestors(node):
        if current.type in ("function_definition", "module"):
            return current
    return None


def assigned_name(node: Node) -> bytes | None:
    """`NAME` when node is the right side of `NAME = ...` (or `obj.NAME = ...`)."""
    parent = node.parent
    if parent is None or parent.type != "assignment":
        return None
    left = parent.child_by_field_name("left")
    if left is None or left == node:
        return None
    if left.type == "attribute":
        left = left.child_by_field_name("attribute")
    return text_of(left) if left is not None and left.type == "identifier" else None


def looks_configured(node: Node | None) -> bool:
    """An expression read from configuration (args.x, cfg["x"], os.environ.get(...))."""
    return node is not None and bool(_CONFIG_SOURCE.search(text_of(node)))


def knob_assignment(hit: Hit) -> Node | None:
    """The assignment whose target is the attribute at the hit, or None (a read)."""
    target = climb(hit.node, "attribute")
    parent = target.parent
    if (
        parent is not None
        and parent.type == "assignment"
        and parent.child_by_field_name("left") == target
    ):
        return parent
    return None
