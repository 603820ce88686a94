"""POST /api/traces/{id}/predictions/wait: APQ's wait for a job, with the QBETS bound beside it."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from predictor.api.query import answer_on_trace
from predictor.serializers.wait import WaitAnswerSerializer, WaitQuerySerializer
from predictor.services import predict


class WaitPredictionViewSet(viewsets.ViewSet):
    """Queue-wait predictions on a stored trace (any logged-in user)."""

    @extend_schema(request=WaitQuerySerializer, responses={200: WaitAnswerSerializer})
    def create(self, request: Request, trace_pk: str) -> Response:
        """Predict how long a job submitted at ``at`` would wait (seconds)."""
        return answer_on_trace(
            request, trace_pk, WaitQuerySerializer, WaitAnswerSerializer, predict.predict_wait
        )


def register(router) -> None:
    router.register(
        r"traces/(?P<trace_pk>\d+)/predictions/wait",
        WaitPredictionViewSet,
        basename="wait-prediction",
    )
