"""Upload limits, each in one place and checked once: the upload form and the API serializer
both call `uploads_check`, and the request-limit middleware refuses a body whose declared length
is over the same byte limit before reading it. The byte limit is a setting
(JOB_UPLOAD_MAX_BYTES); the file count is fixed here."""

from collections.abc import Sequence

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile

MAX_FILES = 64
TOO_MANY_FILES = f"At most {MAX_FILES} files per job."


class UploadRefused(ValueError):
    """The uploads break a limit; the message says which and what to do."""


def too_large_message(size_bytes: int) -> str:
    return (
        f"The upload is {size_bytes:,} bytes; the limit is {settings.JOB_UPLOAD_MAX_BYTES:,} "
        "bytes. Upload fewer or smaller files (gzip traces first: they shrink ~10x)."
    )


def uploads_check(uploads: Sequence[UploadedFile]) -> None:
    """Raise UploadRefused when there are too many files or too many bytes in all."""
    if len(uploads) > MAX_FILES:
        raise UploadRefused(TOO_MANY_FILES)
    total_bytes = sum(upload.size for upload in uploads)
    if total_bytes > settings.JOB_UPLOAD_MAX_BYTES:
        raise UploadRefused(too_large_message(total_bytes))
