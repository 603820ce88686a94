"""Evaluation runs: list/detail (owner or staff), and POST on a trace to start one (202)."""

from __future__ import annotations

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from predictor import services_wait
from predictor.models import EvaluationRun
from predictor.serializers_wait import EvaluationRequestSerializer, EvaluationRunSerializer
from queuecast.permissions import visible_to
from traces.models import Trace


class EvaluationViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Wait and runtime evaluation runs; a user sees their own, staff see all."""

    serializer_class = EvaluationRunSerializer
    queryset = EvaluationRun.objects.none()  # typed schema; get_queryset scopes per user

    def get_queryset(self) -> QuerySet[EvaluationRun]:
        runs = visible_to(EvaluationRun.objects.select_related("owner", "trace"), self.request.user)
        kind = self.request.query_params.get("kind")
        return runs.filter(kind=kind) if kind else runs


class TraceEvaluationViewSet(viewsets.ViewSet):
    """Start an evaluation of a stored trace; answers 202 with the run's URL."""

    @extend_schema(request=EvaluationRequestSerializer, responses={202: EvaluationRunSerializer})
    def create(self, request: Request, trace_pk: str) -> Response:
        trace = get_object_or_404(Trace, pk=trace_pk)
        form = EvaluationRequestSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        run = services_wait.new_run(
            kind=form.validated_data["kind"], owner=request.user, trace=trace,
            methods=form.validated_data.get("methods"), params=form.params(),
        )  # fmt: skip
        services_wait.start_run(run)
        body = EvaluationRunSerializer(run, context={"request": request}).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})


def register(router) -> None:
    router.register("evaluations", EvaluationViewSet, basename="evaluation")
    router.register(
        r"traces/(?P<trace_pk>\d+)/evaluations", TraceEvaluationViewSet, basename="trace-evaluation"
    )
