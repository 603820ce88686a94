"""Celery tasks of the hold queue: take an id (or nothing), call one service."""

from __future__ import annotations

from celery import shared_task

from holdqueue.services.jobs import release_job
from holdqueue.services.sweep import sweep


@shared_task(name="holdqueue.tasks.release_site_job", acks_late=True)
def release_site_job(job_id: int) -> str:
    """Release one held job at its ETA (a no-op if it went already or is not due)."""
    job = release_job(job_id)
    return "released" if job is not None else "nothing to do"


@shared_task(name="holdqueue.tasks.sweep_holdqueue")
def sweep_holdqueue() -> dict:
    """Release whatever is overdue, reconcile, sync sites (Celery beat runs it)."""
    return sweep()
