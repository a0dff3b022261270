"""Declared abstraction layers: files whose job is to be the swappable vendor layer.

A file is one when a folder on its path is accelerator(s)/, backends/ or platform(s)/, when it
is named *_backend.py or *accelerator*.py, or when a comment in it says
`portability: abstraction-layer` (`# portability: abstraction-layer` in Python and build
files, `// portability: abstraction-layer` in C/C++). Vendor code there is expected: its
rewrite-risk findings are re-tune (moving means writing one more backend, not a rewrite).
"""

import re

_LAYER_FOLDERS = frozenset({"accelerator", "accelerators", "backends", "platform", "platforms"})
MARKER = "portability: abstraction-layer"
_MARKER_COMMENT = re.compile(rb"(?:#|//|/\*)[ \t]*" + re.escape(MARKER.encode()) + rb"\b")


def layer_reason(path: str, data: bytes) -> str:
    """Why the file is a declared abstraction layer, or "" when it is not."""
    *folders, name = path.split("/")
    for folder in folders:
        if folder.lower() in _LAYER_FOLDERS:
            return f"under {folder}/"
    lowered = name.lower()
    if lowered.endswith("_backend.py") or (lowered.endswith(".py") and "accelerator" in lowered):
        return f"named {name}"
    if b"abstraction-layer" in data and _MARKER_COMMENT.search(data):
        return f"marked '{MARKER}'"
    return ""
