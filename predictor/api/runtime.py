"""POST /api/traces/{id}/predictions/runtime (a rangeSet) and GET .../load-functions."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from predictor.api.query import answer_on_trace
from predictor.serializers.runtime import (
    LoadFunctionsSerializer,
    RuntimeAnswerSerializer,
    RuntimeQuerySerializer,
)
from predictor.services import predict, runtime
from traces.models import Trace


class RuntimePredictionViewSet(viewsets.ViewSet):
    """Runtime rangeSets on a stored trace (any logged-in user: a read of the trace)."""

    @extend_schema(request=RuntimeQuerySerializer, responses={200: RuntimeAnswerSerializer})
    def create(self, request: Request, trace_pk: str) -> Response:
        """Predict the runtime ranges of a job submitted at ``at`` (seconds)."""
        return answer_on_trace(
            request, trace_pk, RuntimeQuerySerializer, RuntimeAnswerSerializer,
            predict.predict_runtime,
        )  # fmt: skip


class LoadFunctionsViewSet(viewsets.ViewSet):
    """The load functions learned on a trace's tuning part (first 20 % of its jobs)."""

    @extend_schema(responses=LoadFunctionsSerializer)
    def list(self, request: Request, trace_pk: str) -> Response:
        trace = get_object_or_404(Trace, pk=trace_pk)
        return Response(LoadFunctionsSerializer(runtime.load_functions(trace)).data)


def register(router) -> None:
    router.register(
        r"traces/(?P<trace_pk>\d+)/predictions/runtime",
        RuntimePredictionViewSet,
        basename="runtime-prediction",
    )
    router.register(
        r"traces/(?P<trace_pk>\d+)/load-functions", LoadFunctionsViewSet, basename="load-functions"
    )
