"""A finding's fingerprint: the same finding in a later scan of the same code has the same one,
so that a team's dismissal of it carries over (as GitHub code scanning's do).

It hashes the rule id, the file's path and the line's text with its whitespace collapsed: not
the line number, which moves whenever code above it changes. Identical lines of one file that
one rule flags are told apart by their order ("…:2" is the second), as SARIF's
partialFingerprints usually are.
"""

import hashlib
import re
from collections import Counter
from collections.abc import Iterable

FINGERPRINT_VERSION = "v1"
SARIF_FINGERPRINT_KEY = f"gpuAdvisorFinding/{FINGERPRINT_VERSION}"
_WHITESPACE = re.compile(r"\s+")


def normalised_line(code: str) -> str:
    """The line's text with every run of whitespace one space, and none at either end."""
    return _WHITESPACE.sub(" ", code).strip()


def line_hash(rule_id: str, path: str, code: str) -> str:
    text = "\0".join((FINGERPRINT_VERSION, rule_id, path, normalised_line(code)))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def fingerprints(locations: Iterable[tuple[str, str, str]]) -> list[str]:
    """One fingerprint per (rule id, path, line text), given in file order:
    "<hash>:<occurrence>"."""
    seen: Counter[str] = Counter()
    result = []
    for rule_id, path, code in locations:
        digest = line_hash(rule_id, path, code)
        seen[digest] += 1
        result.append(f"{digest}:{seen[digest]}")
    return result
