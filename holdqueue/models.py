"""Sites Queuecast fronts, the jobs users submit to them, and what each site has learned.

- :class:`Site`: a batch system (backend ``slurm`` or ``simulated``), its size and partition.
- :class:`SiteJob`: one job a user submitted through Queuecast. Its ``state`` only moves
  forward (``held -> submitting -> submitted -> pending -> running -> finished``, or to
  ``cancelled`` / ``failed``); the hold queue is the set of ``held`` rows, so a restart loses
  nothing. The last three come from the batch system (the sweep's sync).
- :class:`ClusterAccount`: which cluster account a user's jobs run as at a site that submits
  as each owner (``config.submit_as_owner``); a user without one cannot submit there.
- :class:`SiteHistory`: finished jobs of the site (learned from the batch system, imported
  from ``sacct`` or copied from a trace), the history predictions are fitted on.
- :class:`SimulatedSubmission`: jobs submitted to a ``simulated`` site's virtual cluster.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models


class Site(models.Model):
    BACKENDS = [("slurm", "Slurm"), ("simulated", "Simulated (live replay of a trace)")]

    name = models.SlugField(max_length=100, unique=True)
    backend = models.CharField(max_length=20, choices=BACKENDS)
    machine_procs = models.PositiveIntegerField()
    partition = models.CharField(max_length=100, blank=True, default="")
    # Backend settings: slurm -> slurm_conf, timeout_s, workdir, submit_as_owner, accounting;
    # simulated -> speed, runtime_fraction (the trace is ``trace``, the clock starts at epoch).
    config = models.JSONField(default=dict, blank=True)
    # PROTECT: a trace a site replays cannot be deleted (delete the site first).
    trace = models.ForeignKey(
        "traces.Trace", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    epoch = models.DateTimeField(help_text="Time 0 of the site's clock (seconds in history).")
    synced_until = models.DateTimeField(null=True, blank=True)
    # Why the site cannot work at all (its trace is gone); '' while it is fine.
    broken = models.TextField(blank=True, default="")
    # The sweep's last failure on this site, and how many passes in a row failed.
    last_error = models.TextField(blank=True, default="")
    error_count = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class SiteJob(models.Model):
    HELD, SUBMITTING, SUBMITTED = "held", "submitting", "submitted"
    PENDING, RUNNING, FINISHED = "pending", "running", "finished"
    CANCELLED, FAILED = "cancelled", "failed"
    STATES = [
        (s, s) for s in (HELD, SUBMITTING, SUBMITTED, PENDING, RUNNING, FINISHED, CANCELLED, FAILED)
    ]
    # In the batch system: it knows the job and Queuecast can cancel it there.
    IN_BATCH = (SUBMITTED, PENDING, RUNNING)

    site = models.ForeignKey(Site, on_delete=models.CASCADE, related_name="jobs")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    tag = models.CharField(max_length=64, unique=True, editable=False)
    name = models.CharField(max_length=200, blank=True, default="")
    script = models.TextField()
    procs_requested = models.PositiveIntegerField()
    procs_chosen = models.PositiveIntegerField()
    time_limit_s = models.PositiveIntegerField()
    mold = models.BooleanField(default=True)
    allow_delay = models.BooleanField(default=True)
    state = models.CharField(max_length=20, choices=STATES, db_index=True)
    arrived_at = models.DateTimeField()
    release_at = models.DateTimeField(null=True, blank=True, db_index=True)
    # The hold this job belongs to: itself when it is the head, else the head it queues behind.
    head = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="followers"
    )
    submitted_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    backend_job_id = models.CharField(max_length=64, blank=True, default="")
    backend_state = models.CharField(max_length=40, blank=True, default="")
    decision = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True, default="")
    attempts = models.PositiveIntegerField(default=0)
    # The last submission's outcome is unknown (sbatch timed out...): the job may be in the
    # batch system, so it is looked up by its tag before it is ever submitted again.
    in_doubt = models.BooleanField(default=False)
    # The release time a Celery ETA task was queued for (None: none queued yet).
    release_task_at = models.DateTimeField(null=True, blank=True)
    idempotency_key = models.CharField(max_length=200, null=True, blank=True)
    # SHA-256 of the whole request body: a replayed key must carry the same request.
    request_hash = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-arrived_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["site", "owner", "idempotency_key"], name="sitejob_idempotency"
            )
        ]
        indexes = [models.Index(fields=["site", "state", "release_at"], name="sitejob_due")]

    @property
    def run_s(self) -> float | None:
        """Seconds it ran, once the batch system reported its start and end."""
        if self.started_at is None or self.ended_at is None:
            return None
        return (self.ended_at - self.started_at).total_seconds()

    def save(self, *args, **kwargs) -> None:
        if not self.tag:
            self.tag = f"queuecast-{uuid.uuid4().hex[:16]}"
        super().save(*args, **kwargs)


class SiteHistory(models.Model):
    """A finished job of the site, in SWF terms (seconds since ``Site.epoch``; -1 unknown)."""

    site = models.ForeignKey(Site, on_delete=models.CASCADE, related_name="history")
    job_key = models.CharField(max_length=64)
    user = models.CharField(max_length=100, blank=True, default="")
    group = models.CharField(max_length=100, blank=True, default="")
    partition = models.CharField(max_length=100, blank=True, default="")
    submit_s = models.FloatField()
    wait_s = models.FloatField()
    run_s = models.FloatField()
    procs = models.IntegerField()
    req_time_s = models.FloatField()
    status = models.IntegerField(default=1)

    class Meta:
        ordering = ["site", "submit_s", "id"]
        constraints = [
            models.UniqueConstraint(fields=["site", "job_key"], name="sitehistory_unique_key")
        ]
        indexes = [models.Index(fields=["site", "submit_s"], name="sitehistory_submit")]


class SimulatedSubmission(models.Model):
    """A job in a simulated site's virtual cluster (``backend_id`` = ``q<pk>``)."""

    site = models.ForeignKey(Site, on_delete=models.CASCADE, related_name="+")
    tag = models.CharField(max_length=64)
    name = models.CharField(max_length=200, blank=True, default="")
    user = models.CharField(max_length=150, blank=True, default="")
    procs = models.PositiveIntegerField()
    time_limit_s = models.FloatField()
    runtime_s = models.FloatField()
    submit_ts = models.FloatField(db_index=True)
    cancel_ts = models.FloatField(null=True, blank=True)


class ClusterAccount(models.Model):
    """The cluster account ``user``'s jobs run as at ``site`` (``sbatch --uid``).

    Only sites with ``config.submit_as_owner`` read it; staff fill it in (``manage.py
    cluster_account``). The account is a validated POSIX name, never a number and never root.
    """

    site = models.ForeignKey(Site, on_delete=models.CASCADE, related_name="accounts")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    account = models.CharField(
        max_length=32,
        validators=[
            RegexValidator(r"^[a-z_][a-z0-9_.-]{0,31}$", "a POSIX account name, not a number"),
            RegexValidator(r"^root$", "jobs never run as root", inverse_match=True),
        ],
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["site", "user"], name="clusteraccount_one_per_user")
        ]

    def __str__(self) -> str:
        return f"{self.user} -> {self.account}@{self.site}"
