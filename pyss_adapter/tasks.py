"""Celery tasks of the simulator: take ids, call one service."""

from __future__ import annotations

from celery import shared_task

from pyss_adapter import services


@shared_task(acks_late=True, reject_on_worker_lost=True)
def run_replay(replay_id: int) -> str:
    """Run a ``pending`` replay; returns its final status (or "skipped" if already claimed)."""
    return services.run_pending_replay(replay_id)
