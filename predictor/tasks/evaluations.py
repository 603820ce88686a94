"""Celery task of evaluation runs (wait and runtime): take the run id, call one service."""

from __future__ import annotations

from celery import shared_task

from predictor.services.evaluations import run_pending_evaluation
from queuecast.tasks import RUN_TASK_OPTIONS


@shared_task(name="predictor.tasks_wait.run_evaluation", **RUN_TASK_OPTIONS)
def run_evaluation(run_id: int) -> str:
    """Claim a pending run and evaluate it; returns its final status ("skipped" if not ours)."""
    return run_pending_evaluation(run_id)
