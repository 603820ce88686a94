"""Celery tasks of the traces app: take ids, call one service."""

from __future__ import annotations

from celery import shared_task

from traces import services


@shared_task(acks_late=True, reject_on_worker_lost=True)
def ingest_trace(trace_id: int) -> str:
    """Ingest the upload of a ``pending`` trace; returns its final status."""
    return services.run_pending_ingest(trace_id)
