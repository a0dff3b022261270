"""Token patterns over a file's bytes, each hit dispatched to its rule's handler.

Every rule starts from a token (an identifier, a literal, an include), so regex passes find
every place worth a look and a file without a hit is never parsed. A pattern runs only on
files holding one of its needles (substrings every match contains). The hit's position (code,
string, comment, docstring) comes from the syntax tree, and a handler inspects the tree around
it for the rule's shape and context.
"""

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from advisor.domain.portability.rules import RULES
from jobs.domain.codescan import patterns
from jobs.domain.codescan.candidates import Candidate, Evidence, FileScan, RepoFacts
from jobs.domain.codescan.kinds import Kind
from jobs.domain.codescan.text import SourceText

CODE, STRING, COMMENT, DOCSTRING = "code", "string", "comment", "docstring"
IN_CODE = (CODE,)
IN_CODE_OR_STRING = (CODE, STRING)
IN_STRING = (STRING,)


@dataclass(frozen=True)
class Detector:
    name: str
    pattern: bytes
    handle: Callable[["Hit"], None]
    where: tuple[str, ...] = IN_CODE  # positions where a hit counts
    # Substrings every match contains: a file holding none of them skips the pattern, since
    # `bytes in bytes` runs at memory speed and a regex pass at a tenth of it. Empty: always.
    needles: tuple[bytes, ...] = ()
    # Plain numbers and the like (80 * 1024**3, 48 * 1024, atol=1e-2) are findings only in files
    # that talk about GPUs (patterns.GPU_CONTEXT); in an HTTP client they are buffer sizes.
    gpu_only: bool = False

    @cached_property
    def regex(self) -> re.Pattern[bytes]:
        return re.compile(self.pattern, re.MULTILINE)


class DetectorSet:
    def __init__(self, detectors: Sequence[Detector]) -> None:
        self.detectors = list(detectors)
        self._needles = frozenset(needle for d in detectors for needle in d.needles)

    def hits(
        self, data: bytes, *, gpu_context: bool
    ) -> list[list[tuple[Detector, re.Match[bytes]]]]:
        """Hits grouped by offset, in file order; within a group, in detector order. A hit
        that starts inside an earlier one's span is dropped, as one alternation would."""
        found = {needle for needle in self._needles if needle in data}
        matches = [
            (match.start(), order, detector, match)
            for order, detector in enumerate(self.detectors)
            if gpu_context or not detector.gpu_only
            if not detector.needles or not found.isdisjoint(detector.needles)
            for match in detector.regex.finditer(data)
        ]
        matches.sort(key=lambda item: (item[0], item[1]))
        groups: list[list[tuple[Detector, re.Match[bytes]]]] = []
        end = -1
        for start, _, detector, match in matches:
            if groups and start == groups[-1][0][1].start():
                groups[-1].append((detector, match))
            elif start >= end:
                groups.append([(detector, match)])
                end = match.end()
        return groups


class FileScanner:
    """Scans one file of one language; subclasses know its syntax."""

    def __init__(
        self,
        kind: Kind,
        source: SourceText,
        facts: RepoFacts,
        result: FileScan,
        detectors: DetectorSet,
    ) -> None:
        self.kind = kind
        self.detectors = detectors
        self.source = source
        self.data = source.data
        self.facts = facts
        self.result = result

    @cached_property
    def gpu_context(self) -> bool:
        return self.kind is Kind.CUDA or bool(patterns.GPU_CONTEXT.search(self.data))

    def run(self) -> None:
        for group in self.detectors.hits(self.data, gpu_context=self.gpu_context):
            position = self.position(group[0][1].start())
            # The first detector that counts here handles the hit: DEP001's `flash_attn` does
            # not count in a string, where DEP002's "flash_attn" (in setup.py) does.
            for detector, match in group:
                if position in detector.where:
                    detector.handle(Hit(self, match))
                    break

    def position(self, offset: int) -> str:
        raise NotImplementedError

    def node_for(self, start: int, end: int) -> Any:
        """The smallest syntax node spanning the range (None for files read by line)."""
        return None

    def suppression(self, hit: "Hit") -> str | None:
        """Why findings at this hit are not reported (a platform guard), or None."""
        return None

    def emit(self, hit: "Hit", rule_id: str, offset: int, **details: Any) -> None:
        if self.suppression(hit) is not None:
            return
        line, column, code = self.source.location(offset)
        details.setdefault("severity", RULES[rule_id].severity)
        details["snippet_start_line"], details["snippet"] = self.source.snippet(line - 1)
        self.result.candidates.append(Candidate(rule_id, line, column, code, **details))

    def note(self, question: str, offset: int, label: str) -> None:
        line = self.source.row_of(offset) + 1
        self.result.evidence.append(Evidence(question, self.source.path, line, label))


class Hit:
    """One pattern match, handed to its rule's handler."""

    def __init__(self, scanner: FileScanner, match: re.Match[bytes]) -> None:
        self.scanner = scanner
        self.start = match.start()
        self.end = match.end()
        self.text = match.group()

    @cached_property
    def node(self) -> Any:
        return self.scanner.node_for(self.start, self.end)

    def emit(
        self,
        rule_id: str,
        *,
        severity: str | None = None,
        context: str = "",
        subject: str = "",
        check: str = "",
        tags: frozenset[str] = frozenset(),
    ) -> None:
        details: dict[str, Any] = {"context": context, "subject": subject, "check": check}
        if severity is not None:
            details["severity"] = severity
        if tags:
            details["tags"] = tags
        self.scanner.emit(self, rule_id, self.start, **details)

    def note(self, question: str, label: str) -> None:
        self.scanner.note(question, self.start, label)
