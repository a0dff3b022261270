"""A source file's bytes with line arithmetic. Everything works on bytes, so regex offsets
and tree-sitter offsets agree even when the file has non-ASCII text."""

from bisect import bisect_right

MAX_CODE_CHARS = 300
# A finding's snippet: this many lines either side of its line, each cut at SNIPPET_LINE_CHARS
# (a report stores up to caps.FINDINGS_PER_SCAN snippets; a scan keeps one per candidate).
SNIPPET_CONTEXT_LINES = 3
SNIPPET_LINE_CHARS = 160


def binary_reason(data: bytes) -> str | None:
    """'binary file' for NUL bytes or text that is not UTF-8; None for text.

    The whole file is searched, not its head: a NUL in a finding's code line would reach the
    stored report, and PostgreSQL's jsonb refuses to store one.
    """
    if b"\0" in data:
        return "binary file"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "binary file (not UTF-8 text)"
    return None


class SourceText:
    def __init__(self, path: str, data: bytes) -> None:
        self.path = path
        self.data = data
        self._line_starts: list[int] | None = None
        self._snippets: dict[int, tuple[int, str]] = {}

    @property
    def line_starts(self) -> list[int]:
        # Built on the first finding only: most files have none.
        if self._line_starts is None:
            starts = [0]
            find = self.data.find
            position = find(b"\n")
            while position != -1:
                starts.append(position + 1)
                position = find(b"\n", position + 1)
            self._line_starts = starts
        return self._line_starts

    def row_of(self, offset: int) -> int:
        """0-based line of a byte offset."""
        return bisect_right(self.line_starts, offset) - 1

    def line_bytes(self, row: int) -> bytes:
        starts = self.line_starts
        end = starts[row + 1] - 1 if row + 1 < len(starts) else len(self.data)
        return self.data[starts[row] : end]

    def location(self, offset: int) -> tuple[int, int, str]:
        """(1-based line, 1-based column in characters, stripped line text)."""
        row = self.row_of(offset)
        start = self.line_starts[row]
        column = len(self.data[start:offset].decode("utf-8", "replace")) + 1
        code = self.line_bytes(row).decode("utf-8", "replace").strip()
        return row + 1, column, code[:MAX_CODE_CHARS]

    def lines_around(self, offset: int, radius: int) -> bytes:
        """The text of the lines within `radius` of the offset's line, joined."""
        row = self.row_of(offset)
        starts = self.line_starts
        first = starts[max(row - radius, 0)]
        last_row = row + radius + 1
        end = starts[last_row] if last_row < len(starts) else len(self.data)
        return self.data[first:end]

    def snippet(self, row: int) -> tuple[int, str]:
        """(1-based first line, text) of the lines within SNIPPET_CONTEXT_LINES of a 0-based
        row, right-stripped and joined with newlines; cached, so that findings on one line
        share one string."""
        if row not in self._snippets:
            first = max(row - SNIPPET_CONTEXT_LINES, 0)
            last = min(row + SNIPPET_CONTEXT_LINES, len(self.line_starts) - 1)
            lines = [
                self.line_bytes(index).decode("utf-8", "replace").rstrip()[:SNIPPET_LINE_CHARS]
                for index in range(first, last + 1)
            ]
            while len(lines) > row - first + 1 and not lines[-1]:
                lines.pop()  # the empty line after a final newline is not the file's
            self._snippets[row] = (first + 1, "\n".join(lines))
        return self._snippets[row]
