from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

UPLOAD_PATHS = ("/api/v1/jobs/", "/jobs/new/")


class UploadSizeLimitMiddleware:
    """Refuse an oversized upload from its Content-Length, before a byte of it is read."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method == "POST" and request.path.startswith(UPLOAD_PATHS):
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            limit = settings.JOB_UPLOAD_MAX_BYTES
            if length > limit:
                message = (
                    f"The upload is {length:,} bytes; the limit is {limit:,} bytes. "
                    "Upload fewer or smaller files (gzip traces first: they shrink ~10x)."
                )
                return JsonResponse({"detail": message}, status=413)
        return self.get_response(request)
