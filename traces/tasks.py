"""Celery tasks of the traces app: take ids, call one service."""

from __future__ import annotations

from celery import shared_task

from queuecast.tasks import RUN_TASK_OPTIONS
from traces.services.uploads import run_pending_ingest


@shared_task(name="traces.tasks.ingest_trace", **RUN_TASK_OPTIONS)
def ingest_trace(trace_id: int) -> str:
    """Ingest the upload of a ``pending`` trace; returns its final status."""
    return run_pending_ingest(trace_id)
