"""Decode a trace's events in bulk, half a megabyte at a time, and hand the token walker the rest.

The token walker (parse.py) sees every JSON token, which is exact and guarded but slow: millions
of tokens through a Python loop. Nearly all of a trace is its event list, and nearly every event
there is a flat object of scalars, so `BulkEventReader` sits between the byte stream and the
walker. Inside the top-level event list it cuts the buffered bytes after the last `}` `,` `{` it
can find, decodes the run of events before the cut with msgspec straight into TraceEvent structs,
and removes those bytes (comma included) from what the walker reads. The walker still reads the
rest of the document (metadata, the last event, anything unusual) and keeps every check it makes.

Why a cut is safe: a run starts at an item boundary of the event list (just after `[`, or after a
comma of an earlier run), and `[` + run + `]` decoded as a JSON array proves the run is a sequence
of whole items, so the cut is a boundary too; a cut inside a string or a nested object leaves an
unterminated string or an unbalanced bracket and the decode fails. When a run does not decode
(a false cut, an event whose fields are not scalars, nesting deep enough for msgspec's recursion
limit, bytes that are not UTF-8), it is retried event by event: events that decode go in, events
that are valid JSON of an odd shape are left for the walker, in file order, and anything else
ends the bulk reading: from there on the walker reads every byte and reports what is wrong.

One difference remains on purpose, on the lenient side: inside a decoded run, msgspec checks the
syntax of the fields we never read but not their nesting depth (up to its recursion limit) nor
the range of their numbers. So an unread field nested deeper than 64 levels, or holding an
integer outside int64 or a float past 1.8e308, is skipped there, while the walker refuses the
file. Fields that are read must be scalars, integers within int64, finite floats, or the run
goes to the walker.
"""

import re
from collections.abc import Callable, Sequence

import msgspec

from jobs.domain.traces.kineto.collect import TraceEvent
from jobs.domain.traces.sources import Readable

_READ_BYTES = 512 * 1024
# A run is cut from this much buffered input; more input is buffered to find the list's start
# or the end of an event that is bigger than this, up to _MAX_BUFFER_BYTES.
_RUN_BYTES = 512 * 1024
_MAX_BUFFER_BYTES = 16 << 20
# Candidate cuts examined from the end of the buffer before giving up on it.
_MAX_CANDIDATES = 1000
# Earlier cuts tried when a run fails, before going event by event.
_EARLIER_CUTS = 3
# False cuts merged while retrying event by event before the walker takes over.
_MAX_MERGES = 64

_WHITESPACE = frozenset(b" \t\r\n")
_OPEN, _CLOSE, _COMMA = ord("{"), ord("}"), ord(",")
_NON_WHITESPACE = re.compile(rb"[^ \t\r\n]")
_EVENT_LIST_KEY = re.compile(rb'"traceEvents"[ \t\r\n]*:[ \t\r\n]*\[')
_STRUCTURAL = re.compile(rb'["{}\[\]]')
_STRING_TAIL = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NEXT_CUT = re.compile(rb"}[ \t\r\n]*,[ \t\r\n]*(?={)")

_events = msgspec.json.Decoder(list[TraceEvent])


class BulkEventReader:
    """A readable over `inner` that leaves out the event runs it decoded and passed to
    `add_events`. Read-only and forward-only, like the stream it wraps."""

    def __init__(self, inner: Readable, add_events: Callable[[Sequence[TraceEvent]], None]) -> None:
        self._inner = inner
        self._add_events = add_events
        # Input not yet handed on starts at _buffer[_start]; dropped bytes are cut off on refill.
        self._buffer = b""
        self._start = 0
        self._eof = False
        self._output = b""
        self._output_start = 0
        # Where a run failed, events are decoded one at a time up to this buffer offset.
        self._careful_until = 0
        self._state: Callable[[], None] | None = self._find_event_list

    def read(self, size: int = -1, /) -> bytes:
        if size == 0:
            return b""
        while self._output_start >= len(self._output) and self._state is not None:
            self._output, self._output_start = b"", 0
            self._state()
        start = self._output_start
        end = len(self._output) if size < 0 else min(len(self._output), start + size)
        self._output_start = end
        return self._output[start:end]

    # States: each call moves input from the buffer to the output or to add_events.

    def _find_event_list(self) -> None:
        """Buffer the document's opening up to its event list's `[`, and check that the list is
        the top-level one: a bare list, or `traceEvents` as a key of the top-level object."""
        if not self._fill(_RUN_BYTES):
            return
        buffer = self._buffer
        first = _first_non_whitespace(buffer)
        if first is not None and buffer[first] == ord("["):
            self._enter_event_list(first + 1)
            return
        match = None if first is None else _EVENT_LIST_KEY.search(buffer, first)
        if match is None:
            self._buffer_more()
        elif buffer[first] == _OPEN and _depth_before(buffer, first, match.start()) == 1:
            self._enter_event_list(match.end())
        else:
            self._pass_through()

    def _enter_event_list(self, list_start: int) -> None:
        self._output, self._start = self._buffer[:list_start], list_start
        self._state = self._decode_runs

    def _decode_runs(self) -> None:
        """The input starts at an item boundary of the event list."""
        if self._start < self._careful_until:
            self._decode_one_by_one()
            return
        if not self._fill(_RUN_BYTES):
            return
        buffer, start = self._buffer, self._start
        cut = _last_cut(buffer, start, len(buffer))
        if cut is None:
            # The list's last event (it has no comma after it) or one bigger than the buffer.
            self._buffer_more()
            return
        careful_until = cut[0]
        # The last cut may be false, inside the buffer's unfinished last event: try a few earlier.
        for _ in range(_EARLIER_CUTS + 1):
            run_end, next_item = cut
            events = _decode(buffer, start, run_end)
            if events is not None:
                self._take(events, next_item)
                return
            cut = _last_cut(buffer, start, next_item)
            if cut is None:
                break
        self._careful_until = careful_until
        self._decode_one_by_one()

    def _decode_one_by_one(self) -> None:
        """A run failed: go event by event through it; return as soon as there is output, so
        that the walker reads an event left to it before later events are added."""
        buffer = self._buffer
        while self._start < self._careful_until and not self._output:
            position = self._start
            for _ in range(_MAX_MERGES):
                cut = _NEXT_CUT.search(buffer, position)
                if cut is None:
                    break
                run_end, next_item = cut.start() + 1, cut.end()
                events = _decode(buffer, self._start, run_end)
                if events is not None:
                    self._take(events, next_item)
                    break
                if _is_json_list(buffer, self._start, run_end):
                    self._output, self._start = buffer[self._start : next_item], next_item
                    break
                position = next_item  # a false cut: take the next one along with it
            else:
                self._pass_through()  # not a false cut but broken input: the walker says how
                return
            if cut is None:
                # The event runs past the buffer: buffer more and start over from it.
                self._careful_until = 0
                self._buffer_more()
                return

    def _take(self, events: list[TraceEvent], next_item: int) -> None:
        self._add_events(events)
        self._start = next_item

    def _buffer_more(self) -> None:
        """Nothing to decode in what is buffered: buffer more, or give up past the limit."""
        if self._eof or len(self._buffer) - self._start >= _MAX_BUFFER_BYTES:
            self._pass_through()
        else:
            self._fill(len(self._buffer) - self._start + _READ_BYTES)

    def _pass_through(self) -> None:
        """From here on the walker reads every remaining byte."""
        self._fill(_READ_BYTES)
        self._output, self._buffer, self._start = self._buffer[self._start :], b"", 0
        self._careful_until = 0
        if self._eof and not self._output:
            self._state = None
        else:
            self._state = self._pass_through

    def _fill(self, size: int) -> bool:
        """Have at least `size` bytes of input buffered, or all that is left; False when the
        input has ended with nothing left."""
        if len(self._buffer) - self._start < size and not self._eof:
            parts = [self._buffer[self._start :]]
            buffered = len(parts[0])
            while buffered < size:
                chunk = self._inner.read(_READ_BYTES)
                if not chunk:
                    self._eof = True
                    break
                parts.append(chunk)
                buffered += len(chunk)
            self._careful_until -= self._start
            self._buffer, self._start = b"".join(parts), 0
        if self._eof and self._start >= len(self._buffer):
            self._state = None
            return False
        return True


def _decode(data: bytes, start: int, end: int) -> list[TraceEvent] | None:
    """data[start:end] decoded as a list of events, or None when it is not one."""
    try:
        return _events.decode(_as_list(data, start, end))
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
        return None


def _is_json_list(data: bytes, start: int, end: int) -> bool:
    try:
        msgspec.json.decode(_as_list(data, start, end))
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
        return False
    return True


def _as_list(data: bytes, start: int, end: int) -> bytes:
    """`[` data[start:end] `]` in one copy, checked to be UTF-8: msgspec checks the strings it
    decodes, not the ones it skips, and the walker checks them all."""
    run = b"".join((b"[", memoryview(data)[start:end], b"]"))
    if not run.isascii():
        run.decode("utf-8")
    return run


def _first_non_whitespace(data: bytes) -> int | None:
    match = _NON_WHITESPACE.search(data)
    return None if match is None else match.start()


def _depth_before(data: bytes, start: int, end: int) -> int | None:
    """Bracket depth at `end` for the JSON text data[start:end], or None when `end` falls
    inside a string. Only structure is tracked; the walker checks the syntax."""
    depth, position = 0, start
    while (match := _STRUCTURAL.search(data, position, end)) is not None:
        if data[match.start()] == ord('"'):
            string = _STRING_TAIL.match(data, match.end(), end)
            if string is None:
                return None
            position = string.end()
            continue
        depth += 1 if data[match.start()] in b"{[" else -1
        position = match.end()
    return depth


def _last_cut(data: bytes, start: int, end: int) -> tuple[int, int] | None:
    """The last `}` `,` `{` in data[start:end] (whitespace allowed between): the end of the run
    before it (just past the `}`) and the start of the item after it (the `{`)."""
    for _ in range(_MAX_CANDIDATES):
        brace = data.rfind(b"{", start, end)
        if brace <= start:
            return None
        end = brace
        before = brace - 1
        while before >= start and data[before] in _WHITESPACE:
            before -= 1
        if before < start or data[before] != _COMMA:
            continue
        before -= 1
        while before >= start and data[before] in _WHITESPACE:
            before -= 1
        if before >= start and data[before] == _CLOSE:
            return before + 1, brace
    return None
