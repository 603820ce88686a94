"""Shapes of the molding API: the request to start a run and the run row."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.reverse import reverse

from jobmolding.core.policy import STRATEGIES
from jobmolding.core.runtime_models import RUNTIME_MODELS
from jobmolding.models import MoldingRun
from jobmolding.plots import PLOTS
from jobmolding.services import (
    REPLAY_WAIT_METHODS,
    RUNTIME_METHODS,
    MoldingSettings,
    public_result,
)
from queuecast.longrun import Status


class MoldingRequestSerializer(serializers.Serializer):
    strategies = serializers.ListField(
        child=serializers.ChoiceField(choices=list(STRATEGIES)),
        default=list(STRATEGIES),
        min_length=1,
    )
    runtime_model = serializers.ChoiceField(choices=list(RUNTIME_MODELS), default="downey")
    seed = serializers.IntegerField(default=0, min_value=0, max_value=2**31 - 1)
    tune_fraction = serializers.FloatField(default=0.2, min_value=0.0, max_value=1.0)
    sigma = serializers.FloatField(default=1.0, min_value=0.0, max_value=100.0)
    wait_method = serializers.ChoiceField(
        choices=list(REPLAY_WAIT_METHODS),
        required=False,
        help_text="the wait method the replay decides with; default: the live service's "
        "(auto; sim costs about a tenth of its CPU: docs/molding.md)",
    )
    runtime_method = serializers.ChoiceField(
        choices=list(RUNTIME_METHODS),
        required=False,
        help_text="the runtime method the replay decides with; default: the live service's "
        "(choose)",
    )

    def validate_tune_fraction(self, value: float) -> float:
        if not 0.0 < value < 1.0:
            raise serializers.ValidationError("must be in (0, 1): strictly between 0 and 1")
        return value

    def validate_sigma(self, value: float) -> float:
        if value <= 0:
            raise serializers.ValidationError("must be > 0")
        return value

    def settings(self) -> MoldingSettings:
        data = dict(self.validated_data)
        data["strategies"] = tuple(data["strategies"])
        return MoldingSettings(**data)


class MoldingRunSerializer(serializers.ModelSerializer):
    """A run: status and progress, then the figures per strategy and the plot URLs."""

    url = serializers.SerializerMethodField()
    owner = serializers.CharField(source="owner.username", read_only=True, default=None)
    trace_name = serializers.CharField(source="trace.name", read_only=True, default=None)
    result = serializers.SerializerMethodField()
    plots = serializers.SerializerMethodField()

    class Meta:
        model = MoldingRun
        fields = [
            "id", "url", "trace", "trace_name", "swf_path", "owner", "strategies",
            "runtime_model", "seed", "tune_fraction", "sigma", "wait_method", "runtime_method",
            "status", "progress", "error",
            "created_at", "started_at", "finished_at", "result", "plots",
        ]  # fmt: skip
        read_only_fields = fields

    @extend_schema_field(OpenApiTypes.URI)
    def get_url(self, run: MoldingRun) -> str:
        return reverse("molding-run-detail", args=[run.pk], request=self.context.get("request"))

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_result(self, run: MoldingRun) -> dict[str, Any]:
        return public_result(run.result or {})

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_plots(self, run: MoldingRun) -> dict[str, str]:
        if run.status != Status.DONE or "plot_data" not in (run.result or {}):
            return {}
        request = self.context.get("request")
        return {
            name: reverse("molding-run-plot", args=[run.pk, name], request=request)
            for name in PLOTS
        }
