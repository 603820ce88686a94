"""Stored evaluation runs (wait and runtime), readable over the API."""

from __future__ import annotations

from django.db import models

from queuecast.longrun import LongRun


class EvaluationRun(LongRun):
    class Kind(models.TextChoices):
        WAIT = "wait"
        RUNTIME = "runtime"

    kind = models.CharField(max_length=16, choices=Kind.choices)
    trace = models.ForeignKey(
        "traces.Trace", on_delete=models.CASCADE, null=True, blank=True, related_name="evaluations"
    )
    swf_path = models.CharField(max_length=500, blank=True, default="")
    methods = models.JSONField(default=list)
    params = models.JSONField(default=dict, blank=True)
    result = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at"]
