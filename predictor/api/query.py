"""The one shape of a prediction view on a stored trace: validate the query against the
trace, call one service, serialize its answer (the wait and runtime APIs share it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.shortcuts import get_object_or_404
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from queuecast.answers import represent
from traces.models import Trace


def answer_on_trace(
    request: Request,
    trace_pk: str,
    query_serializer: type[serializers.Serializer],
    answer_serializer: type[serializers.Serializer],
    service: Callable[[Trace, dict[str, Any]], dict[str, Any]],
) -> Response:
    """``service(trace, query)`` on the trace ``trace_pk``, the query checked against it; the
    answer written by the answer serializer's one instance (``queuecast.answers``)."""
    trace = get_object_or_404(Trace, pk=trace_pk)
    query = query_serializer(data=request.data, context={"trace": trace})
    query.is_valid(raise_exception=True)
    return Response(represent(answer_serializer, service(trace, query.validated_data)))
