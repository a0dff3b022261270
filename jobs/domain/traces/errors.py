"""The one exception the trace domain raises for uploads it cannot analyse."""


class TraceError(Exception):
    """An upload we cannot analyse. The message says what the file is and what to do about it."""
