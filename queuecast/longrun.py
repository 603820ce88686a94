"""Long work as a database row: status, progress, error and result.

A ``POST`` creates the row and answers 202 with its URL; the Celery task is
enqueued on transaction commit and *claims* the row with a conditional update,
so a duplicate delivery of the same message does nothing.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models, transaction
from django.utils import timezone


class Status(models.TextChoices):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class LongRun(models.Model):
    """Abstract base for ingests, evaluations and replays."""

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
    def claim(cls, pk: int) -> bool:
        """Move ``pk`` from pending to running; False if another worker has it."""
        updated = cls.objects.filter(pk=pk, status=Status.PENDING).update(
            status=Status.RUNNING, started_at=timezone.now(), progress=0.0
        )
        return updated == 1

    @classmethod
    def set_progress(cls, pk: int, fraction: float) -> None:
        cls.objects.filter(pk=pk).update(progress=max(0.0, min(1.0, float(fraction))))

    @classmethod
    def finish(cls, pk: int, **fields: Any) -> None:
        cls.objects.filter(pk=pk).update(
            status=Status.DONE, progress=1.0, finished_at=timezone.now(), **fields
        )

    @classmethod
    def fail(cls, pk: int, reason: str) -> None:
        cls.objects.filter(pk=pk).update(
            status=Status.FAILED, error=reason[:10_000], finished_at=timezone.now()
        )


def enqueue_on_commit(task: Any, *args: Any) -> None:
    """Send ``task`` once the surrounding transaction commits (never before)."""
    transaction.on_commit(lambda: task.delay(*args))
