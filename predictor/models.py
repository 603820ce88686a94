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


class EvaluationChunk(LongRun):
    """One contiguous slice of one method's test targets, answered by any worker.

    An evaluation run with a broker cuts each method's targets into chunks
    (``predictor.services.fanout``); every chunk is a long run of its own (claim, lease, heartbeat,
    reaper), so a worker that dies mid-chunk leaves it to be taken over, never lost.
    ``lo``/``hi`` index the run's target array; ``first_row``/``last_row`` are the log rows
    at its ends, checked by the worker that answers it. ``answer`` is the pickled prediction
    (the run's own data, written and read by this service only), deleted with the run's end.
    """

    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="chunks")
    method = models.CharField(max_length=32)
    index = models.PositiveIntegerField()
    lo = models.PositiveIntegerField()
    hi = models.PositiveIntegerField()
    first_row = models.BigIntegerField()
    last_row = models.BigIntegerField()
    answer = models.BinaryField(null=True, blank=True)
    seconds = models.FloatField(default=0.0)
    worker = models.CharField(max_length=300, blank=True, default="")

    class Meta:
        ordering = ["run", "method", "index"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "method", "index"], name="evaluationchunk_one_per_slice"
            )
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} {self.method} chunk {self.index}"
