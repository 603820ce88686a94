"""Storage of SWF traces: one ``Trace`` row and its ``Job`` rows (18 SWF fields)."""

from __future__ import annotations

from django.db import models

from queuecast.longrun import LongRun


class Trace(LongRun):
    """An ingested SWF log. ``status``/``progress``/``error`` track the ingest."""

    name = models.CharField(max_length=200, unique=True)
    description = models.TextField(blank=True, default="")
    source = models.CharField(max_length=500, blank=True, default="", help_text="File or URL.")
    header = models.JSONField(default=dict, blank=True)
    job_count = models.PositiveIntegerField(default=0)
    first_submit_s = models.FloatField(null=True, blank=True)
    last_submit_s = models.FloatField(null=True, blank=True)
    machine_procs = models.PositiveIntegerField(null=True, blank=True)
    utilisation = models.FloatField(null=True, blank=True)
    ingest_report = models.JSONField(default=dict, blank=True)
    # The ingest task's input: where the upload waits and how strictly to parse it.
    upload_path = models.CharField(max_length=1000, blank=True, default="")
    lenient = models.BooleanField(default=False, help_text="Skip malformed lines, report them.")

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.name

    @property
    def span_days(self) -> float | None:
        if self.first_submit_s is None or self.last_submit_s is None:
            return None
        return (self.last_submit_s - self.first_submit_s) / 86400.0


class Job(models.Model):
    """One SWF record. Field numbers are those of the SWF definition; -1 = missing."""

    # No index of its own: the (trace, submit_time) index serves lookups by trace.
    trace = models.ForeignKey(Trace, on_delete=models.CASCADE, related_name="jobs", db_index=False)
    job_number = models.BigIntegerField()  # 1
    submit_time = models.FloatField()  # 2, seconds since the trace start
    wait_time = models.FloatField()  # 3
    run_time = models.FloatField()  # 4
    allocated_procs = models.IntegerField()  # 5
    avg_cpu_time = models.FloatField()  # 6
    used_memory = models.FloatField()  # 7, KB per processor
    requested_procs = models.IntegerField()  # 8
    requested_time = models.FloatField()  # 9
    requested_memory = models.FloatField()  # 10
    status = models.IntegerField()  # 11
    user_id = models.IntegerField()  # 12
    group_id = models.IntegerField()  # 13
    executable_id = models.IntegerField()  # 14
    queue_id = models.IntegerField()  # 15
    partition_id = models.IntegerField()  # 16
    preceding_job = models.BigIntegerField()  # 17
    think_time = models.FloatField()  # 18

    class Meta:
        ordering = ["trace", "submit_time", "job_number"]
        constraints = [
            models.UniqueConstraint(fields=["trace", "job_number"], name="job_unique_number")
        ]
        indexes = [
            models.Index(fields=["trace", "submit_time"], name="job_trace_submit"),
            models.Index(fields=["trace", "user_id", "submit_time"], name="job_trace_user"),
            models.Index(fields=["trace", "queue_id", "submit_time"], name="job_trace_queue"),
        ]
