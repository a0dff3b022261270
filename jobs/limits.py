"""Upload limits, each in one place: the upload form, the API serializer and the request-limit
middleware all read them from here. The byte limit is a setting (JOB_UPLOAD_MAX_BYTES)."""

MAX_FILES = 64
TOO_MANY_FILES = f"At most {MAX_FILES} files per job."
