"""Hugging Face Hub model ids (`owner/name`, optionally `@revision`), checked before any request.

The Hub's own rules (huggingface_hub's validate_repo_id): letters, digits, `-`, `_` and `.`,
at most 96 characters, no `--` or `..`, neither part starting or ending with `-` or `.`. A
revision is a branch, a tag or a commit hash; `/` is allowed inside a branch name.
"""

import re
from dataclasses import dataclass

MAX_REPO_ID_CHARS = 96
MAX_REVISION_CHARS = 100
_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9_])?"
_REPO_ID = re.compile(rf"{_PART}/{_PART}")
_REVISION = re.compile(r"[A-Za-z0-9._-]+(?:/[A-Za-z0-9._-]+)*")


class InvalidHubId(ValueError):
    """Not a Hub model id; the message says which rule it breaks."""


@dataclass(frozen=True)
class HubRef:
    repo_id: str
    revision: str | None = None  # None: the repository's default branch

    def __str__(self) -> str:
        return self.repo_id if self.revision is None else f"{self.repo_id}@{self.revision}"


def looks_like_hub_id(text: str) -> bool:
    """A slash is what tells a Hub id from a bundled slug."""
    return "/" in text


def parse_hub_ref(text: str) -> HubRef:
    repo_id, _, revision = text.strip().partition("@")
    if not _REPO_ID.fullmatch(repo_id):
        raise InvalidHubId(
            f"{repo_id[:120]!r} is not a Hub model id: owner/name, letters, digits, '-', '_', '.'"
        )
    if len(repo_id) > MAX_REPO_ID_CHARS:
        raise InvalidHubId(f"a Hub model id has at most {MAX_REPO_ID_CHARS} characters")
    if "--" in repo_id or ".." in repo_id:
        raise InvalidHubId("a Hub model id has no '--' or '..'")
    if "@" in text and not revision:
        raise InvalidHubId("'@' must be followed by a revision (a branch, tag or commit)")
    if revision:
        if len(revision) > MAX_REVISION_CHARS or not _REVISION.fullmatch(revision):
            raise InvalidHubId(
                f"{revision[:120]!r} is not a revision: a branch, tag or commit hash"
            )
        if ".." in revision:
            raise InvalidHubId("a revision has no '..'")
    return HubRef(repo_id=repo_id, revision=revision or None)
