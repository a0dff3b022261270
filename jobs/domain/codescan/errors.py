"""The one exception the code scanner raises for uploads it cannot scan."""


class ScanError(Exception):
    """An upload we cannot scan. The message says what is wrong and what to do about it."""
