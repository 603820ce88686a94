"""The lifecycle's own table: one lease per running long-run row (see ``queuecast.longrun``)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class RunLease(models.Model):
    """Who runs a ``running`` row, and when it last said it was alive.

    Kept apart from the run rows so that a heartbeat never waits on a row lock held by
    the run's own transaction (an ingest writes its trace row inside one), and so that
    every kind of run (ingest, evaluation, replay, later ones) shares one table.
    """

    run_label = models.CharField(max_length=100, help_text="app_label.model of the run row")
    run_id = models.BigIntegerField()
    token = models.CharField(max_length=32, unique=True)
    worker = models.CharField(max_length=300, help_text="host:pid:start of the claiming process")
    attempt = models.PositiveIntegerField(default=1)
    claimed_at = models.DateTimeField(default=timezone.now)
    heartbeat_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run_label", "run_id"], name="runlease_one_per_run")
        ]

    def __str__(self) -> str:
        return f"{self.run_label}#{self.run_id} by {self.worker}"
