"""A source file's bytes with line arithmetic. Everything works on bytes, so regex offsets
and tree-sitter offsets agree even when the file has non-ASCII text."""

from bisect import bisect_right

MAX_CODE_CHARS = 300


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
