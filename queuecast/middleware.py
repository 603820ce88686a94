"""Request-size guard: a body over the limit is a JSON 413 before anything reads it."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

MULTIPART_SLACK = 64 * 1024  # form fields and boundaries around an uploaded file


def body_limit(request: HttpRequest) -> int:
    """Uploads (multipart) may carry a trace; any other body is a small form or JSON."""
    if request.content_type == "multipart/form-data":
        return settings.QUEUECAST_MAX_UPLOAD_BYTES + MULTIPART_SLACK
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE


class BodySizeMiddleware:
    """Answers 413 from the ``Content-Length`` header, naming the limit."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return JsonResponse({"detail": "Content-Length is not a number"}, status=400)
        limit = body_limit(request)
        if length > limit:
            return JsonResponse(
                {
                    "detail": f"request body of {length} bytes is over the limit of {limit} "
                    "bytes (QUEUECAST_MAX_UPLOAD_MB for uploads)",
                    "limit_bytes": limit,
                },
                status=413,
            )
        return self.get_response(request)
