"""Shapes of the traces API: trace rows, the upload form, job rows and job filters."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.reverse import reverse

from traces.models import Job, Trace


class TraceSerializer(serializers.HyperlinkedModelSerializer):
    """A trace with its ingest status and summary numbers."""

    url = serializers.HyperlinkedIdentityField(view_name="trace-detail")
    owner = serializers.CharField(source="owner.username", read_only=True, default=None)
    span_days = serializers.FloatField(read_only=True, allow_null=True)
    jobs_url = serializers.SerializerMethodField()
    export_url = serializers.SerializerMethodField()

    class Meta:
        model = Trace
        fields = [
            "id",
            "url",
            "name",
            "description",
            "source",
            "owner",
            "status",
            "progress",
            "error",
            "created_at",
            "started_at",
            "finished_at",
            "job_count",
            "first_submit_s",
            "last_submit_s",
            "span_days",
            "machine_procs",
            "utilisation",
            "header",
            "ingest_report",
            "jobs_url",
            "export_url",
        ]
        read_only_fields = fields

    @extend_schema_field(OpenApiTypes.URI)
    def get_jobs_url(self, trace: Trace) -> str:
        return reverse("trace-jobs", args=[trace.pk], request=self.context.get("request"))

    @extend_schema_field(OpenApiTypes.URI)
    def get_export_url(self, trace: Trace) -> str:
        return reverse("traces:export-swf", args=[trace.pk], request=self.context.get("request"))


class TraceListSerializer(TraceSerializer):
    """The list's rows: the summary without the header and the ingest report, which can be
    long (up to QUEUECAST_MAX_HEADER_KB each) and are on the detail."""

    class Meta(TraceSerializer.Meta):
        fields = [f for f in TraceSerializer.Meta.fields if f not in ("header", "ingest_report")]
        read_only_fields = fields


def printable_name(value: str) -> str:
    """A trace name goes into file names and headers: no control characters (CR, LF, NUL)."""
    bad = sorted({f"U+{ord(c):04X}" for c in value if not c.isprintable()})
    if bad:
        raise serializers.ValidationError(f"must not contain control characters ({', '.join(bad)})")
    return value


class TraceUploadSerializer(serializers.Serializer):
    """Multipart upload of a ``.swf`` or ``.swf.gz`` file."""

    file = serializers.FileField(help_text="SWF log, plain or gzip-compressed.")
    name = serializers.CharField(
        max_length=200,
        required=False,
        allow_blank=True,
        help_text="Unique trace name; defaults to the file name without .swf/.gz.",
        validators=[printable_name],
    )
    description = serializers.CharField(required=False, allow_blank=True, default="")
    lenient = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Skip malformed lines (listed in the ingest report) instead of failing.",
    )


class JobSerializer(serializers.ModelSerializer):
    """One SWF record; times in seconds since the trace start, -1 = missing."""

    class Meta:
        model = Job
        exclude = ["trace"]


class JobFilterSerializer(serializers.Serializer):
    """Query parameters of ``/api/traces/{id}/jobs/``."""

    user = serializers.IntegerField(required=False, help_text="SWF user id (field 12).")
    queue = serializers.IntegerField(required=False, help_text="SWF queue id (field 15).")
    submit_after = serializers.FloatField(
        required=False, help_text="Jobs submitted at or after this time (s since trace start)."
    )
    submit_before = serializers.FloatField(
        required=False, help_text="Jobs submitted before this time (s since trace start)."
    )

    def validate(self, attrs: dict) -> dict:
        after, before = attrs.get("submit_after"), attrs.get("submit_before")
        if after is not None and before is not None and before <= after:
            raise serializers.ValidationError(
                {"submit_before": f"must be greater than submit_after ({after})"}
            )
        return attrs
