"""Shapes of the wait-prediction and evaluation API."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.reverse import reverse

from predictor.core.wait.registry import FACTORIES as WAIT_FACTORIES
from predictor.models import EvaluationRun
from predictor.serializers.job import JobQuerySerializer
from predictor.serializers.why import WhySerializer


class WaitQuerySerializer(JobQuerySerializer):
    """A job whose queue wait is asked for (see :class:`JobQuerySerializer`)."""

    method = serializers.CharField(
        required=False,
        help_text="Answer with this wait method instead of the trace's default (auto): "
        + ", ".join(sorted(WAIT_FACTORIES)),
    )

    def validate_method(self, value: str) -> str:
        if value not in WAIT_FACTORIES:
            raise serializers.ValidationError(f"one of {', '.join(sorted(WAIT_FACTORIES))}")
        return value

    confidence = serializers.FloatField(
        min_value=0.5, max_value=0.99, required=False, default=0.9,
        help_text="Confidence of the returned interval (0.5-0.99).",
    )  # fmt: skip
    within_s = serializers.FloatField(
        min_value=0.0, required=False, default=None, allow_null=True,
        help_text="Also answer P(start within this many seconds).",
    )  # fmt: skip


class WaitAnswerSerializer(serializers.Serializer):
    wait_s = serializers.FloatField(help_text="Predicted wait, seconds.")
    method = serializers.CharField(help_text="The wait method that answered (APQ).")
    predictor = serializers.CharField(allow_null=True, help_text="Which APQ predictor answered.")
    support = serializers.IntegerField(allow_null=True, help_text="History jobs behind it.")
    qbets_upper_s = serializers.FloatField(
        allow_null=True, help_text="QBETS 0.95-quantile bound, seconds."
    )
    at = serializers.FloatField()
    confidence = serializers.FloatField(help_text="Confidence of the interval.")
    interval_low_s = serializers.FloatField(
        allow_null=True, help_text="Interval low bound (null: no known recent job to calibrate)."
    )
    interval_high_s = serializers.FloatField(allow_null=True, help_text="Interval high bound.")
    interval_jobs = serializers.IntegerField(
        help_text="Started jobs the interval's online rule replayed (0: none yet)."
    )
    interval_level_used = serializers.FloatField(
        allow_null=True,
        help_text="The level the rule read the errors of the 200 replayed jobs predicted nearest "
        "this one at (wait minus predicted wait, added to this prediction): the confidence, "
        "corrected by how often the replayed jobs' own intervals "
        "missed (null: split conformal over recent_jobs).",
    )
    within_s = serializers.FloatField(allow_null=True)
    p_within = serializers.FloatField(
        allow_null=True,
        help_text="P(start within within_s): of the p_within_jobs recent jobs (arrived by then, "
        "started or still waiting) whose predicted wait was nearest this one's (log scale), "
        "the Kaplan-Meier chance to start within it, a job still waiting counted as waiting "
        "at least as long as it has so far.",
    )
    p_within_jobs = serializers.IntegerField(
        help_text="The recent jobs p_within counts (0: within_s not asked)."
    )
    recent_jobs = serializers.IntegerField(
        help_text="Recent started jobs behind recent_aae_s and recent_mean_wait_s."
    )
    recent_aae_s = serializers.FloatField(
        allow_null=True, help_text="The method's AAE on those jobs, seconds."
    )
    runtime_method = serializers.CharField(help_text="The runtime method of this trace.")
    methods = serializers.DictField(help_text="Both methods, and how the runtime one was chosen.")
    accuracy = serializers.DictField(
        help_text="Both methods on the most recent jobs: wait AAE beside always-zero's, "
        "runtime success and coverage beside the requested time's."
    )
    why = WhySerializer(help_text="Why it waits and what single change starts it sooner.")
    recent_mean_wait_s = serializers.FloatField(
        allow_null=True, help_text="Their mean wait (AAE / mean wait = 1 is answering 0)."
    )


class EvaluationRequestSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=EvaluationRun.Kind.choices)
    methods = serializers.ListField(child=serializers.CharField(max_length=32), required=False)
    tune_fraction = serializers.FloatField(min_value=0.0, max_value=0.95, default=0.2)
    limit = serializers.IntegerField(min_value=1, required=False, allow_null=True, default=None)
    seed = serializers.IntegerField(min_value=0, required=False, default=0)
    simulate_waits = serializers.BooleanField(
        default=False, help_text="Wait runs: take waits from an EASY replay (logs without waits)."
    )

    def params(self) -> dict[str, Any]:
        data = self.validated_data
        return {k: data[k] for k in ("tune_fraction", "limit", "seed", "simulate_waits")}


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
