"""Shapes of the replay API: the request to start one and the replay row."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.reverse import reverse

from pyss_adapter.core.estimates import ESTIMATE_NAMES
from pyss_adapter.core.jobs import MODES
from pyss_adapter.core.placement import PLACEMENT_NAMES
from pyss_adapter.core.replay import SCHEDULERS
from pyss_adapter.models import Replay
from pyss_adapter.services import ReplaySettings


class ReplayRequestSerializer(serializers.Serializer):
    scheduler = serializers.ChoiceField(choices=list(SCHEDULERS), default="easy")
    estimates = serializers.ChoiceField(choices=list(ESTIMATE_NAMES), default="requested")
    mode = serializers.ChoiceField(choices=list(MODES), default="default")
    processors = serializers.IntegerField(
        min_value=1, max_value=10_000_000, required=False, allow_null=True, default=None
    )
    placement = serializers.ChoiceField(choices=["", *PLACEMENT_NAMES], default="")
    placement_options = serializers.DictField(default=dict)
    cores_per_node = serializers.IntegerField(
        min_value=1, max_value=100_000, required=False, allow_null=True, default=None
    )
    usage_model = serializers.ChoiceField(choices=["constant", "beta"], default="constant")
    usage_rho = serializers.FloatField(min_value=1e-6, max_value=1.0, default=0.1)
    usage_corr = serializers.ChoiceField(choices=["rank", "job"], default="rank")
    usage_sample_s = serializers.FloatField(min_value=1.0, max_value=86400.0, default=300.0)
    usage_knowledge = serializers.ChoiceField(choices=["oracle", "history"], default="oracle")
    usage_fill = serializers.FloatField(
        min_value=0.0, max_value=1.0, required=False, allow_null=True, default=None
    )
    seed = serializers.IntegerField(min_value=0, max_value=2**63 - 1, default=0)

    def settings(self) -> ReplaySettings:
        return ReplaySettings(**self.validated_data)


class ReplaySerializer(serializers.ModelSerializer):
    """A replay: status and progress, then the statistics (both views)."""

    url = serializers.SerializerMethodField()
    owner = serializers.CharField(source="owner.username", read_only=True, default=None)
    trace_name = serializers.CharField(source="trace.name", read_only=True)
    statistics = serializers.SerializerMethodField()

    class Meta:
        model = Replay
        fields = [
            "id", "url", "trace", "trace_name", "owner", "scheduler", "estimates", "mode",
            "processors", "placement", "placement_options", "status", "progress", "error",
            "created_at", "started_at", "finished_at", "statistics",
        ]  # fmt: skip
        read_only_fields = fields

    @extend_schema_field(OpenApiTypes.URI)
    def get_url(self, replay: Replay) -> str:
        return reverse("replay-detail", args=[replay.pk], request=self.context.get("request"))

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_statistics(self, replay: Replay) -> dict[str, Any]:
        out = {k: v for k, v in (replay.result or {}).items() if k != "utilisation_series"}
        if isinstance(out.get("placement"), dict):  # the series are in the detail view
            out["placement"] = {k: v for k, v in out["placement"].items() if k != "series"}
        return out


class ReplayDetailSerializer(ReplaySerializer):
    """Adds the utilisation per 30-minute bin and the placement's node series."""

    utilisation_series = serializers.SerializerMethodField()
    placement_series = serializers.SerializerMethodField()

    class Meta(ReplaySerializer.Meta):
        fields = [*ReplaySerializer.Meta.fields, "utilisation_series", "placement_series"]
        read_only_fields = fields

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_placement_series(self, replay: Replay) -> dict[str, Any] | None:
        return ((replay.result or {}).get("placement") or {}).get("series")

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_utilisation_series(self, replay: Replay) -> dict[str, Any] | None:
        return (replay.result or {}).get("utilisation_series")
