"""Celery task answering one chunk of an evaluation run (``predictor.services.fanout``)."""

from __future__ import annotations

from celery import shared_task

from predictor.services.fanout import run_chunk as answer_chunk
from queuecast.tasks import RUN_TASK_OPTIONS


@shared_task(name="predictor.tasks_chunks.run_chunk", **RUN_TASK_OPTIONS)
def run_chunk(chunk_id: int) -> str:
    """Answer the chunk if it is still pending; returns its final status or "skipped"."""
    return answer_chunk(chunk_id)
