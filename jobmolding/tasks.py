"""Celery task of the molding evaluations: takes an id, calls one service."""

from __future__ import annotations

from celery import shared_task

from jobmolding.services import run_pending_molding
from queuecast.tasks import RUN_TASK_OPTIONS


@shared_task(name="jobmolding.tasks.run_molding", **RUN_TASK_OPTIONS)
def run_molding(run_id: int) -> str:
    """Run a ``pending`` molding evaluation; its final status (or "skipped" if not ours)."""
    return run_pending_molding(run_id)
