"""Celery tasks of the predictor (discovered by name ``tasks``): one task runs evaluation
runs of both kinds (``EvaluationRun.kind`` picks the wait or the runtime service), one
answers a chunk of such a run (``predictor.services.fanout``)."""

from predictor.tasks.chunks import run_chunk
from predictor.tasks.evaluations import run_evaluation

__all__ = ["run_chunk", "run_evaluation"]
