"""POST /api/predict/: where to submit (``holdqueue.services.where``)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, viewsets
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from holdqueue.serializers import PredictSerializer
from holdqueue.services.where import where_to_submit
from predictor.serializers.why import WhySerializer


class WhereQuerySerializer(PredictSerializer):
    """One job asked everywhere: processors, time limit, user (yourself unless staff)."""

    traces = serializers.JSONField(
        required=False,
        default=False,
        help_text="Also answer on stored traces: true for every finished trace, or a list of "
        "trace ids (each at its last submission).",
    )

    def validate_traces(self, value: Any) -> bool | list[int]:
        if isinstance(value, bool):
            return value
        if isinstance(value, list) and all(isinstance(v, int) and v > 0 for v in value):
            return value
        raise serializers.ValidationError("true, false or a list of trace ids (integers)")


class PlaceIntervalSerializer(serializers.Serializer):
    low_s = serializers.FloatField(allow_null=True)
    high_s = serializers.FloatField(allow_null=True)
    confidence = serializers.FloatField()


class PlaceAnswerSerializer(serializers.Serializer):
    kind = serializers.CharField(help_text="site or trace")
    id = serializers.IntegerField()
    name = serializers.CharField()
    predicted_start_s = serializers.FloatField(help_text="Seconds after submission.")
    predicted_end_s = serializers.FloatField(help_text="Start + predicted runtime, seconds.")
    predicted_start = serializers.DateTimeField(allow_null=True, help_text="Sites only.")
    predicted_end = serializers.DateTimeField(allow_null=True, help_text="Sites only.")
    queue_read_at = serializers.DateTimeField(
        allow_null=True, help_text="Sites only: when the batch queue the answer reads was asked."
    )
    interval = PlaceIntervalSerializer(help_text="The wait's calibrated interval, seconds.")
    method = serializers.DictField(child=serializers.CharField(allow_null=True))
    accuracy = serializers.DictField(
        help_text="Both methods on the most recent jobs here: wait (AAE beside always-zero's, "
        "seconds) and runtime (success and coverage beside the requested time's)."
    )
    why = WhySerializer()


class SkippedSerializer(serializers.Serializer):
    kind = serializers.CharField(help_text="site or trace")
    id = serializers.IntegerField()
    name = serializers.CharField()
    reason = serializers.CharField()


class WhereAnswerSerializer(serializers.Serializer):
    procs = serializers.IntegerField()
    time_limit_s = serializers.IntegerField()
    answers = PlaceAnswerSerializer(many=True, help_text="Sorted by predicted finish.")
    skipped = SkippedSerializer(many=True, help_text="Places that could not answer, and why.")


class WhereViewSet(viewsets.ViewSet):
    """Where to submit: the predicted start and finish at every site (and trace)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(request=WhereQuerySerializer, responses={200: WhereAnswerSerializer})
    def create(self, request: Request) -> Response:
        query = WhereQuerySerializer(data=request.data, context={"request": request})
        query.is_valid(raise_exception=True)
        return Response(
            WhereAnswerSerializer(where_to_submit(request.user, query.validated_data)).data
        )


def register(router) -> None:
    router.register("predict", WhereViewSet, basename="where")
