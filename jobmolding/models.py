"""Stored molding evaluations: a trace replayed under baseline, molding and molding + delay."""

from __future__ import annotations

from django.db import models

from queuecast.longrun import LongRun


class MoldingRun(LongRun):
    """One ``evaluate_molding`` run. ``result`` holds the JSON of the command plus the data
    the plots are drawn from (``plot_data``)."""

    trace = models.ForeignKey(
        "traces.Trace",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="molding_runs",
    )
    swf_path = models.CharField(max_length=500, blank=True, default="")
    strategies = models.JSONField(default=list)
    runtime_model = models.CharField(max_length=16, default="downey")
    seed = models.IntegerField(default=0)
    tune_fraction = models.FloatField(default=0.2)
    sigma = models.FloatField(default=1.0)
    # the methods the replay decides with: every run stores ``MoldingSettings``' (by default
    # the live service's); the column defaults are what runs stored before these fields used
    wait_method = models.CharField(max_length=32, default="sim")
    runtime_method = models.CharField(max_length=32, default="rangeset")
    result = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at"]
