"""The service's error hierarchy and its one mapping to HTTP.

Core packages raise plain Python exceptions (``traces.core.swf.SwfFormatError``,
...). Services wrap them in :class:`QueuecastError` subclasses; this handler turns
them into DRF-shaped bodies (``{"detail": ..., "field": ..., "line": ...}``).
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.db.models import ProtectedError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

LOG = logging.getLogger(__name__)


class QueuecastError(Exception):
    """Base of the service's own errors; ``status_code`` picks the HTTP status. An
    ``expected`` one (a model still being fitted) is part of normal service: it is logged
    once at INFO here, not as Django's ERROR line for a 5xx."""

    status_code = status.HTTP_400_BAD_REQUEST
    expected = False

    def __init__(self, detail: str, **context: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        self.context = {k: v for k, v in context.items() if v is not None}


class InvalidInput(QueuecastError):
    """The request names something that cannot be used (a field, a line, a range)."""


class NotFoundError(QueuecastError):
    status_code = status.HTTP_404_NOT_FOUND


class ConflictError(QueuecastError):
    status_code = status.HTTP_409_CONFLICT


class TooLarge(QueuecastError):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE


class ServiceUnavailable(QueuecastError):
    """A dependency (the task queue, the database) is down; retry later."""

    status_code = status.HTTP_503_SERVICE_UNAVAILABLE


def in_use_message(exc: ProtectedError) -> str:
    """A row other rows still need (``on_delete=PROTECT``), named by who needs it."""
    users = sorted({f"{o._meta.verbose_name} {o}" for o in exc.protected_objects})
    return f"it is in use by {', '.join(users)}: delete or change those first"


def exception_handler(exc: Exception, context: dict) -> Response | None:
    if isinstance(exc, QueuecastError):
        response = Response({"detail": exc.detail, **exc.context}, status=exc.status_code)
        if "retry_after_s" in exc.context:  # a 503 that knows when to come back
            response["Retry-After"] = str(int(exc.context["retry_after_s"]))
        if exc.expected:
            request = context.get("request")
            LOG.info("%s %s: %s", exc.status_code, getattr(request, "path", "?"), exc.detail)
            response._has_been_logged = True  # type: ignore[attr-defined]  # django.utils.log
        return response
    if isinstance(exc, ProtectedError):
        return Response({"detail": in_use_message(exc)}, status=status.HTTP_409_CONFLICT)
    if isinstance(exc, RequestDataTooBig):
        return Response({"detail": str(exc)}, status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
    return drf_exception_handler(exc, context)


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return JsonResponse({"detail": f"no such address: {request.path}"}, status=404)
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    """Never the settings or a traceback: those go to the log."""
    if _is_api(request):
        return JsonResponse({"detail": "internal server error (logged)"}, status=500)
    return defaults.server_error(request)
