"""The one lifecycle of long work (ingests, evaluations, replays, and later kinds).

A run is a row of a model that inherits :class:`LongRun` (``status``, ``progress``,
``error``, timestamps). Its life:

1. A service creates the row ``pending`` and calls :func:`enqueue` with the task's
   *name* (services never import task modules, so there is no import cycle). The
   task is sent when the transaction commits; if the queue cannot take it, the row
   is failed (or deleted by the caller's ``on_failure``) and ``QueueUnavailable``
   (503) is raised, so nothing waits for a message that was never sent.
2. The Celery task takes the id and calls one service, which calls :func:`execute`.
   ``execute`` *claims* the row (``pending -> running`` by a conditional update, plus a
   :class:`~queuecast.models.RunLease` naming this process), runs the body under the
   memory ceiling and the time limit, and ends the row ``done`` or ``failed`` with the
   reason. A duplicate delivery finds the row claimed by a live worker and stops; a
   *redelivered* message whose worker died takes the row over and runs it again.
3. While it runs, a heartbeat thread refreshes the lease every
   ``QUEUECAST_RUN_HEARTBEAT_S``; :mod:`queuecast.reaper` fails rows whose worker is
   gone (docs/operations.md states the bound).

A body receives a :class:`Claim`: ``claim.progress(f)`` reports progress (and checks
the time limit); it returns the fields to store when done, or calls ``claim.finish``
itself inside its own transaction when the result must commit with other rows.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import IntegrityError, models, transaction
from django.utils import timezone

from queuecast.errors import QueuecastError, ServiceUnavailable
from queuecast.heartbeat import BEATER, lease_dead_reason, stale_before, worker_id
from queuecast.limits import Deadline, memory_ceiling
from queuecast.models import RunLease
from queuecast.permissions import visible_to as visible_to  # the read rule, one copy

logger = logging.getLogger(__name__)
ERROR_CHARS = 10_000
SOFT_LIMIT_MARGIN_S = 30  # Celery's soft limit backs up the progress-checked deadline


class Status(models.TextChoices):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class QueueUnavailable(ServiceUnavailable):
    """The task could not be sent to the queue; the run was not started."""


class LongRun(models.Model):
    """Abstract base of every kind of run: inherit it, then follow docs/operations.md."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", null=True
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    progress = models.FloatField(default=0.0, help_text="Fraction done, 0..1.")
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    @classmethod
    def claim(cls, pk: int) -> Claim | None:
        """Take ``pk`` for this process (see :func:`claim`); None if it is not ours to run."""
        return claim(cls, pk)

    @classmethod
    def set_progress(cls, pk: int, fraction: float) -> None:
        cls.objects.filter(pk=pk, status=Status.RUNNING).update(
            progress=max(0.0, min(1.0, float(fraction)))
        )

    @classmethod
    def finish(cls, pk: int, **fields: Any) -> None:
        """Mark ``pk`` done (commands that run in-process); releases its lease."""
        with transaction.atomic():
            RunLease.objects.filter(run_label=cls._meta.label_lower, run_id=pk).delete()
            cls.objects.filter(pk=pk).update(
                status=Status.DONE, progress=1.0, finished_at=timezone.now(), **fields
            )

    @classmethod
    def fail(cls, pk: int, reason: str) -> None:
        with transaction.atomic():
            RunLease.objects.filter(run_label=cls._meta.label_lower, run_id=pk).delete()
            cls.objects.filter(pk=pk).exclude(status=Status.DONE).update(
                status=Status.FAILED, error=reason[:ERROR_CHARS], finished_at=timezone.now()
            )


@dataclass
class Claim:
    """This process's hold on one running row: progress, finish and fail go through it."""

    model: type[LongRun]
    pk: int
    token: str
    attempt: int
    deadline: Deadline = field(default_factory=lambda: Deadline(None))
    finished: bool = False
    _last_progress: float = -1.0

    @property
    def label(self) -> str:
        return self.model._meta.label_lower

    def progress(self, fraction: float) -> None:
        """Record progress (at most every 1 %) and stop the run past its time limit."""
        self.deadline.check()
        if fraction >= 1.0 or fraction - self._last_progress >= 0.01:
            self._last_progress = fraction
            self.model.set_progress(self.pk, fraction)

    def still_ours(self) -> bool:
        return RunLease.objects.filter(token=self.token).exists()

    def finish(self, **fields: Any) -> bool:
        """``running -> done`` with ``fields``; False (nothing written) if the row was taken."""
        with transaction.atomic():
            if not RunLease.objects.filter(token=self.token).delete()[0]:
                return False
            self.model.objects.filter(pk=self.pk, status=Status.RUNNING).update(
                status=Status.DONE, progress=1.0, error="", finished_at=timezone.now(), **fields
            )
        self.finished = True
        return True

    def fail(self, reason: str) -> bool:
        with transaction.atomic():
            if not RunLease.objects.filter(token=self.token).delete()[0]:
                return False
            self.model.objects.filter(pk=self.pk, status=Status.RUNNING).update(
                status=Status.FAILED, error=reason[:ERROR_CHARS], finished_at=timezone.now()
            )
        return True


def claim(model: type[LongRun], pk: int) -> Claim | None:
    """``pending -> running`` for this process; a ``running`` row whose worker is dead is
    taken over (a redelivered message re-runs it). None: done, failed, gone, or alive
    elsewhere."""
    now, label = timezone.now(), model._meta.label_lower
    token, me = uuid.uuid4().hex, worker_id()
    with transaction.atomic():  # the row is never seen running without its lease
        started_now = model.objects.filter(pk=pk, status=Status.PENDING).update(
            status=Status.RUNNING, started_at=now, progress=0.0, error=""
        )
        if started_now:
            RunLease.objects.filter(run_label=label, run_id=pk).delete()
            RunLease.objects.create(run_label=label, run_id=pk, token=token, worker=me)
    if started_now:
        return _held(model, pk, token, 1)
    started = model.objects.filter(pk=pk, status=Status.RUNNING).values_list("started_at")
    if not started:
        return None
    lease = RunLease.objects.filter(run_label=label, run_id=pk).first()
    if lease is None:
        return _adopt(model, pk, started[0][0], token, me, now)
    reason = lease_dead_reason(lease.worker, lease.heartbeat_at, now)
    if reason is None:
        return None
    taken = RunLease.objects.filter(pk=lease.pk, token=lease.token).update(
        token=token, worker=me, attempt=lease.attempt + 1, claimed_at=now, heartbeat_at=now
    )
    if not taken:
        return None
    attempt = lease.attempt + 1
    logger.warning("%s #%s: %s; running it again (attempt %s)", label, pk, reason, attempt)
    model.objects.filter(pk=pk).update(started_at=now, progress=0.0)
    return _held(model, pk, token, attempt)


def _adopt(
    model: type[LongRun], pk: int, started_at: Any, token: str, me: str, now: Any
) -> Claim | None:
    """A running row with no lease: its claimer died before writing one (or long ago)."""
    if started_at is not None and started_at > stale_before(now):
        return None  # its claimer may be between the row update and the lease insert
    try:
        with transaction.atomic():
            RunLease.objects.create(
                run_label=model._meta.label_lower, run_id=pk, token=token, worker=me, attempt=2
            )
    except IntegrityError:
        return None  # another delivery adopted it first
    logger.warning("%s #%s: running with no lease; running it again", model._meta.label_lower, pk)
    model.objects.filter(pk=pk).update(started_at=now, progress=0.0)
    return _held(model, pk, token, 2)


def _held(model: type[LongRun], pk: int, token: str, attempt: int) -> Claim:
    BEATER.add(token)
    limit = float(settings.QUEUECAST_RUN_TIME_LIMIT_S)
    return Claim(model, pk, token, attempt, Deadline(limit))


Body = Callable[[Claim], dict[str, Any] | None]


def execute(model: type[LongRun], pk: int, body: Body) -> str:
    """Claim ``pk``, run ``body(claim)`` within the ceilings, end the row; its final status.

    ``body`` returns the fields to store on the done row (or calls ``claim.finish``
    itself). Any exception fails the row with its reason; the worker stays alive.
    """
    held = claim(model, pk)
    if held is None:
        return "skipped"
    try:
        with memory_ceiling(settings.QUEUECAST_RUN_MEMORY_MB):
            fields = body(held)
        if not held.finished:
            held.finish(**(fields or {}))
    except QueuecastError as exc:  # includes RunLimitExceeded: the reason is the message
        _fail_hard(held, exc.detail)
    except SoftTimeLimitExceeded:
        _fail_hard(held, f"time limit reached: Celery's soft time limit of {_soft_limit()} s")
    except Exception as exc:  # a bug or a lost database must still end the row
        logger.exception("%s #%s failed", held.label, pk)
        _fail_hard(held, f"{type(exc).__name__}: {exc}")
    finally:
        BEATER.remove(held.token)
    status = model.objects.filter(pk=pk).values_list("status", flat=True).first()
    return status or "deleted"


def _soft_limit() -> int:
    return int(settings.QUEUECAST_RUN_TIME_LIMIT_S) + SOFT_LIMIT_MARGIN_S


def _fail_hard(held: Claim, reason: str) -> None:
    """Record a crash; if the database is down too, the reaper fails the row later."""
    try:
        held.fail(reason)
    except Exception:
        logger.exception("could not record the failure of %s #%s", held.label, held.pk)


def enqueue(
    row: LongRun, task_name: str, *, on_failure: Callable[[str], None] | None = None
) -> None:
    """Send the task ``task_name(row.pk)`` once the transaction commits.

    If the broker refuses it, ``on_failure(reason)`` runs (default: the row is failed
    with the reason) and :class:`QueueUnavailable` is raised (HTTP 503).
    """
    model, pk = type(row), row.pk

    def send() -> None:
        from kombu.exceptions import OperationalError

        try:
            task_named(task_name).delay(pk)
        except (OperationalError, ConnectionError, OSError) as exc:
            reason = f"the task queue is unavailable ({type(exc).__name__}: {exc}); not started"
            logger.error("%s #%s: %s", model._meta.label_lower, pk, reason)
            (on_failure or (lambda why: model.fail(pk, why)))(reason)
            raise QueueUnavailable(reason) from exc

    transaction.on_commit(send)


def task_named(name: str) -> Any:
    """The registered Celery task called ``name`` (task modules load lazily outside a worker)."""
    from celery import current_app

    if name not in current_app.tasks:
        current_app.autodiscover_tasks(force=True)
    return current_app.tasks[name]
