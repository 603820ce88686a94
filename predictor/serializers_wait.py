"""Shapes of the wait-prediction and evaluation API."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.reverse import reverse

from predictor.models import EvaluationRun


class WaitQuerySerializer(serializers.Serializer):
    """A job to predict for, submitted at ``at`` (seconds since the trace start).

    The view passes the trace in the context; processors are checked against its machine
    size and ``at`` against its span of submit times.
    """

    user_id = serializers.IntegerField(min_value=-1)
    group_id = serializers.IntegerField(min_value=-1, required=False, default=-1)
    queue_id = serializers.IntegerField(min_value=-1, required=False, default=-1)
    requested_procs = serializers.IntegerField(min_value=1)
    requested_time = serializers.FloatField(min_value=0.0, help_text="Seconds requested.")
    at = serializers.FloatField(min_value=0.0, help_text="Submit time, seconds since trace start.")

    def validate_requested_procs(self, value: int) -> int:
        size = self.context["trace"].machine_procs
        if size and value > size:
            raise serializers.ValidationError(
                f"must be at most the machine size, {size} processors"
            )
        return value

    def validate_at(self, value: float) -> float:
        trace = self.context["trace"]
        lo, hi = trace.first_submit_s, trace.last_submit_s
        if lo is not None and hi is not None and not lo <= value <= hi:
            raise serializers.ValidationError(f"must lie in the trace's span [{lo:g}, {hi:g}] s")
        return value


class WaitAnswerSerializer(serializers.Serializer):
    wait_s = serializers.FloatField(help_text="APQ's predicted wait, seconds.")
    predictor = serializers.CharField(allow_null=True, help_text="Which APQ predictor answered.")
    support = serializers.IntegerField(allow_null=True, help_text="History jobs behind it.")
    qbets_upper_s = serializers.FloatField(help_text="QBETS 0.95-quantile bound, seconds.")
    qbets_point_s = serializers.FloatField(help_text="QBETS median point, seconds.")
    at = serializers.FloatField()


class EvaluationRequestSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=EvaluationRun.Kind.choices)
    methods = serializers.ListField(child=serializers.CharField(max_length=32), required=False)
    tune_fraction = serializers.FloatField(min_value=0.0, max_value=0.95, default=0.2)
    limit = serializers.IntegerField(min_value=1, required=False, allow_null=True, default=None)
    seed = serializers.IntegerField(min_value=0, required=False, default=0)

    def params(self) -> dict[str, Any]:
        data = self.validated_data
        return {k: data[k] for k in ("tune_fraction", "limit", "seed")}


class EvaluationRunSerializer(serializers.ModelSerializer):
    """An evaluation run: its status and progress, then per-method results."""

    url = serializers.SerializerMethodField()
    owner = serializers.CharField(source="owner.username", read_only=True, default=None)
    trace_name = serializers.CharField(source="trace.name", read_only=True, default=None)

    class Meta:
        model = EvaluationRun
        fields = [
            "id", "url", "kind", "owner", "trace", "trace_name", "swf_path", "methods", "params",
            "status", "progress", "error", "created_at", "started_at", "finished_at", "result",
        ]  # fmt: skip
        read_only_fields = fields

    @extend_schema_field(OpenApiTypes.URI)
    def get_url(self, run: EvaluationRun) -> str:
        return reverse("evaluation-detail", args=[run.pk], request=self.context.get("request"))
