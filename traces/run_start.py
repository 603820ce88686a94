"""Start a long run on a stored trace: the one view behind every kind of run.

``POST /api/traces/{id}/evaluations/``, ``.../replays/`` and ``.../molding-runs/`` each
validate the body with their request serializer, create the run row through their service
(which enqueues the task on commit) and answer 202 with the run and its address in
``Location`` (style.md, "The service"; docs/architecture.md, "Long runs"). A kind says only
its two serializers and how to start; the schema is given per kind with
``extend_schema_view(create=...)``.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Model
from django.shortcuts import get_object_or_404
from rest_framework import serializers, status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from traces.models import Trace


class StartRunOnTrace(viewsets.ViewSet):
    """Validate, start, answer 202 with the run's URL (a subclass sets the three parts)."""

    request_serializer: type[serializers.Serializer]
    run_serializer: type[serializers.Serializer]

    def start(self, trace: Trace, user: Any, form: Any) -> Model:
        """Create (and enqueue) the run from the validated ``form``."""
        raise NotImplementedError

    def create(self, request: Request, trace_pk: str) -> Response:
        trace = get_object_or_404(Trace, pk=trace_pk)
        form = self.request_serializer(data=request.data)
        form.is_valid(raise_exception=True)
        run = self.start(trace, request.user, form)
        body = self.run_serializer(run, context={"request": request}).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})
