"""Shapes and type checks of the live-site API."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework import serializers

from holdqueue.models import Site, SiteJob
from traces.models import Trace

SLURM_CONFIG = {
    "slurm_conf": str,
    "timeout_s": (int, float),
    "workdir": str,
    "submit_as_owner": bool,
    "accounting": str,
}
SIMULATED_CONFIG = {"speed": (int, float), "runtime_fraction": (int, float)}


def max_time_limit() -> int:
    return getattr(settings, "QUEUECAST_MAX_TIME_LIMIT_S", 30 * 86400)


class SiteSerializer(serializers.ModelSerializer):
    """A site; its backend ``config`` (paths on the server) is shown to staff only."""

    history_jobs = serializers.IntegerField(read_only=True, source="history.count")

    def to_representation(self, instance: Site) -> dict[str, Any]:
        data = super().to_representation(instance)
        request = self.context.get("request")
        if request is None or not request.user.is_staff:
            data["config"] = {}
        return data

    class Meta:
        model = Site
        fields = [
            "id",
            "name",
            "backend",
            "machine_procs",
            "partition",
            "config",
            "trace",
            "epoch",
            "synced_until",
            "created_at",
            "history_jobs",
        ]
        read_only_fields = fields


class SiteCreateSerializer(serializers.Serializer):
    name = serializers.SlugField(max_length=100)
    backend = serializers.ChoiceField(choices=Site.BACKENDS)
    machine_procs = serializers.IntegerField(min_value=1, max_value=10_000_000, required=False)
    partition = serializers.CharField(max_length=100, required=False, default="", allow_blank=True)
    config = serializers.DictField(required=False, default=dict)
    trace = serializers.PrimaryKeyRelatedField(
        queryset=Trace.objects.all(), required=False, allow_null=True, default=None
    )
    warm_up = serializers.BooleanField(default=True)

    def validate_name(self, value: str) -> str:
        if Site.objects.filter(name=value).exists():
            raise serializers.ValidationError(f"a site called {value!r} exists")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        allowed = SLURM_CONFIG if attrs["backend"] == "slurm" else SIMULATED_CONFIG
        for key, value in attrs.get("config", {}).items():
            if key not in allowed:
                raise serializers.ValidationError(
                    {
                        "config": f"unknown key {key!r} for {attrs['backend']} (known: "
                        f"{', '.join(allowed)})"
                    }
                )
            if not isinstance(value, allowed[key]) or (key == "speed" and value <= 0):
                raise serializers.ValidationError({"config": f"{key} has a bad value {value!r}"})
        return attrs


class LiveStatusSerializer(serializers.Serializer):
    queue_length = serializers.IntegerField(read_only=True)
    running_jobs = serializers.IntegerField(read_only=True)
    busy_procs = serializers.IntegerField(read_only=True)
    utilisation = serializers.FloatField(read_only=True, allow_null=True)
    held_jobs = serializers.IntegerField(read_only=True)
    at = serializers.DateTimeField(read_only=True)


class SiteStatusSerializer(SiteSerializer):
    """The site with its live status (the schema of ``GET /api/sites/{id}/``)."""

    queue_length = serializers.IntegerField(read_only=True)
    running_jobs = serializers.IntegerField(read_only=True)
    busy_procs = serializers.IntegerField(read_only=True)
    utilisation = serializers.FloatField(read_only=True, allow_null=True)
    held_jobs = serializers.IntegerField(read_only=True)
    at = serializers.DateTimeField(read_only=True)

    class Meta(SiteSerializer.Meta):
        fields = [
            *SiteSerializer.Meta.fields,
            "queue_length",
            "running_jobs",
            "busy_procs",
            "utilisation",
            "held_jobs",
            "at",
        ]
        read_only_fields = fields


class LiveJobSerializer(serializers.Serializer):
    backend_job_id = serializers.CharField()
    tag = serializers.CharField()
    name = serializers.CharField()
    user = serializers.CharField()
    procs = serializers.IntegerField()
    time_limit_s = serializers.FloatField(allow_null=True)
    state = serializers.CharField()
    backend_state = serializers.CharField()
    submitted_at = serializers.DateTimeField(allow_null=True)
    started_at = serializers.DateTimeField(allow_null=True)


class QueueSerializer(serializers.Serializer):
    at = serializers.DateTimeField()
    machine_procs = serializers.IntegerField()
    jobs = LiveJobSerializer(many=True)


class PredictSerializer(serializers.Serializer):
    procs = serializers.IntegerField(min_value=1)
    time_limit_s = serializers.IntegerField(min_value=1)
    user = serializers.CharField(max_length=150, required=False, allow_blank=True)
    at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    confidence = serializers.FloatField(min_value=0.5, max_value=0.99, default=0.9)

    def validate_time_limit_s(self, value: int) -> int:
        if value > max_time_limit():
            raise serializers.ValidationError(f"at most {max_time_limit()} s")
        return value


class JobCreateSerializer(serializers.Serializer):
    procs = serializers.IntegerField(min_value=1)
    time_limit_s = serializers.IntegerField(min_value=1)
    script = serializers.CharField(required=False, allow_blank=False, trim_whitespace=False)
    command = serializers.CharField(required=False, allow_blank=False, max_length=4096)
    name = serializers.CharField(max_length=200, required=False, default="", allow_blank=True)
    mold = serializers.BooleanField(default=True)
    allow_delay = serializers.BooleanField(default=True)
    candidates = serializers.ListField(
        child=serializers.IntegerField(min_value=1), required=False, max_length=64
    )

    def validate_time_limit_s(self, value: int) -> int:
        if value > max_time_limit():
            raise serializers.ValidationError(f"at most {max_time_limit()} s")
        return value

    def validate_script(self, value: str) -> str:
        if not value.startswith("#!"):
            raise serializers.ValidationError("a batch script starts with '#!' (e.g. #!/bin/sh)")
        if "\x00" in value:
            raise serializers.ValidationError("the script contains a NUL byte")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if bool(attrs.get("script")) == bool(attrs.get("command")):
            raise serializers.ValidationError({"script": "give exactly one of script or command"})
        return attrs


class SiteJobSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", read_only=True)

    class Meta:
        model = SiteJob
        fields = [
            "id",
            "site",
            "owner",
            "name",
            "state",
            "procs_requested",
            "procs_chosen",
            "time_limit_s",
            "mold",
            "allow_delay",
            "arrived_at",
            "release_at",
            "submitted_at",
            "backend_job_id",
            "backend_state",
            "tag",
            "decision",
            "error",
            "head",
        ]
        read_only_fields = fields


class HeldJobSerializer(serializers.ModelSerializer):
    """A held job in the site's hold queue; owner and name only for the owner (and staff)."""

    owner = serializers.SerializerMethodField()
    name = serializers.SerializerMethodField()
    mine = serializers.SerializerMethodField()

    class Meta:
        model = SiteJob
        fields = ["id", "mine", "owner", "name", "procs_chosen", "arrived_at", "release_at", "head"]
        read_only_fields = fields

    def _sees(self, job: SiteJob) -> bool:
        user = self.context["request"].user
        return bool(user.is_staff or job.owner_id == user.pk)

    def get_mine(self, job: SiteJob) -> bool:
        return job.owner_id == self.context["request"].user.pk

    def get_owner(self, job: SiteJob) -> str:
        return job.owner.username if self._sees(job) else ""

    def get_name(self, job: SiteJob) -> str:
        return job.name if self._sees(job) else ""


class SiteRangeSerializer(serializers.Serializer):
    low_s = serializers.FloatField()
    high_s = serializers.FloatField()
    probability = serializers.FloatField()


class SiteWaitSerializer(serializers.Serializer):
    point_s = serializers.FloatField()
    low_s = serializers.FloatField()
    high_s = serializers.FloatField(help_text="inf is sent as null: the interval is uncalibrated")
    confidence = serializers.FloatField()
    upper_bound_s = serializers.FloatField(allow_null=True)


class SiteRuntimeSerializer(serializers.Serializer):
    point_s = serializers.FloatField()
    level = serializers.CharField()
    support = serializers.IntegerField()
    ranges = SiteRangeSerializer(many=True)


class SiteResponseSerializer(serializers.Serializer):
    point_s = serializers.FloatField()
    ranges = SiteRangeSerializer(many=True)


class SitePredictAnswerSerializer(serializers.Serializer):
    site = serializers.CharField()
    at = serializers.DateTimeField()
    procs = serializers.IntegerField()
    time_limit_s = serializers.IntegerField()
    predicted_start = serializers.DateTimeField()
    predicted_start_s = serializers.FloatField(help_text="seconds after `at`")
    predicted_end = serializers.DateTimeField()
    predicted_end_s = serializers.FloatField(help_text="seconds after `at`")
    wait = SiteWaitSerializer()
    runtime = SiteRuntimeSerializer()
    response = SiteResponseSerializer()
    method = serializers.DictField(child=serializers.CharField(allow_null=True))
    accuracy = serializers.DictField()
