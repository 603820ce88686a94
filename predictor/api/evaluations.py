"""Evaluation runs: list/detail (owner or staff), and POST on a trace to start one (202)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, viewsets

from predictor.models import EvaluationRun
from predictor.serializers.wait import EvaluationRequestSerializer, EvaluationRunSerializer
from predictor.services import evaluations
from queuecast.permissions import visible_to
from traces.models import Trace
from traces.run_start import StartRunOnTrace


class EvaluationViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Wait and runtime evaluation runs; a user sees their own, staff see all."""

    serializer_class = EvaluationRunSerializer
    queryset = EvaluationRun.objects.none()  # typed schema; get_queryset scopes per user

    def get_queryset(self) -> QuerySet[EvaluationRun]:
        runs = visible_to(EvaluationRun.objects.select_related("owner", "trace"), self.request.user)
        kind = self.request.query_params.get("kind")
        return runs.filter(kind=kind) if kind else runs


@extend_schema_view(
    create=extend_schema(
        request=EvaluationRequestSerializer, responses={202: EvaluationRunSerializer}
    )
)
class TraceEvaluationViewSet(StartRunOnTrace):
    """Start an evaluation of a stored trace; answers 202 with the run's URL."""

    request_serializer = EvaluationRequestSerializer
    run_serializer = EvaluationRunSerializer

    def start(self, trace: Trace, user: Any, form: Any) -> EvaluationRun:
        run = evaluations.new_run(
            kind=form.validated_data["kind"], owner=user, trace=trace,
            methods=form.validated_data.get("methods"), params=form.params(),
        )  # fmt: skip
        evaluations.start_run(run)
        return run


def register(router) -> None:
    router.register("evaluations", EvaluationViewSet, basename="evaluation")
    router.register(
        r"traces/(?P<trace_pk>\d+)/evaluations", TraceEvaluationViewSet, basename="trace-evaluation"
    )
