"""Celery tasks of the lifecycle itself: the periodic reaper (beat, broker mode)."""

from __future__ import annotations

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings

from queuecast.longrun import SOFT_LIMIT_MARGIN_S
from queuecast.reaper import reap

# Options of every run task: the message is acknowledged only when the run ended, and
# put back if the worker process dies (the lease makes a second delivery harmless);
# Celery's time limits back up the run's own deadline.
RUN_TASK_OPTIONS = {
    "acks_late": True,
    "reject_on_worker_lost": True,
    "soft_time_limit": settings.QUEUECAST_RUN_TIME_LIMIT_S + SOFT_LIMIT_MARGIN_S,
    "time_limit": settings.QUEUECAST_RUN_TIME_LIMIT_S + 2 * SOFT_LIMIT_MARGIN_S,
}


@shared_task(name="queuecast.tasks.reap_runs", ignore_result=True)
def reap_runs() -> int:
    """Fail running rows whose worker is gone; returns how many."""
    return len(reap())


@worker_ready.connect
def reap_on_start(**_: object) -> None:
    """A restarted worker first ends what its dead predecessor left running."""
    reap()
