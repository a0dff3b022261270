"""Tree-sitter parsers, one per language, built once per process from the standalone grammar
wheels (tree-sitter-cuda, tree-sitter-cpp, tree-sitter-python)."""

from collections.abc import Iterator
from functools import cache, cached_property

import tree_sitter
import tree_sitter_cpp
import tree_sitter_cuda
import tree_sitter_python

from jobs.domain.codescan.detect import FileScanner
from jobs.domain.codescan.kinds import Kind

Node = tree_sitter.Node

_GRAMMARS = {
    Kind.CUDA: tree_sitter_cuda.language,
    Kind.CPP: tree_sitter_cpp.language,
    Kind.PYTHON: tree_sitter_python.language,
}


@cache
def parser_for(kind: Kind) -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(_GRAMMARS[kind]()))


def parse(kind: Kind, data: bytes) -> Node:
    return parser_for(kind).parse(data).root_node


def ancestors(node: Node | None) -> Iterator[Node]:
    """The node itself, then its parents up to the root."""
    while node is not None:
        yield node
        node = node.parent


def text_of(node: Node | None) -> bytes:
    return node.text or b"" if node is not None else b""


class TreeScanner(FileScanner):
    """A file read through its syntax tree, parsed on first use: most files match no
    detector's needles and are never parsed."""

    @cached_property
    def root(self) -> Node:
        return parse(self.kind, self.data)

    def node_for(self, start: int, end: int) -> Node:
        return self.root.descendant_for_byte_range(start, end)
