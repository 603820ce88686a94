"""Stored replays of a trace in the simulator."""

from __future__ import annotations

from django.db import models

from queuecast.longrun import LongRun


class Replay(LongRun):
    trace = models.ForeignKey("traces.Trace", on_delete=models.CASCADE, related_name="replays")
    scheduler = models.CharField(max_length=16, default="easy")
    estimates = models.CharField(max_length=16, default="requested")
    mode = models.CharField(max_length=16, default="default")
    processors = models.PositiveIntegerField(null=True, blank=True)
    placement = models.CharField(max_length=24, blank=True, default="")
    # The placement's options, usage model and seed (ReplaySettings.placement_record).
    placement_options = models.JSONField(default=dict, blank=True)
    result = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at"]
