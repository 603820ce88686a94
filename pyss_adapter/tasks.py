"""Celery tasks of the simulator: take ids, call one service."""

from __future__ import annotations

from celery import shared_task

from pyss_adapter.services import run_pending_replay
from queuecast.tasks import RUN_TASK_OPTIONS


@shared_task(name="pyss_adapter.tasks.run_replay", **RUN_TASK_OPTIONS)
def run_replay(replay_id: int) -> str:
    """Run a ``pending`` replay; returns its final status (or "skipped" if not ours)."""
    return run_pending_replay(replay_id)
