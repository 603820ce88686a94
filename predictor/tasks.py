"""Celery tasks of the predictor (discovered by name ``tasks``): one task runs evaluation
runs of both kinds (``EvaluationRun.kind`` picks the wait or the runtime service)."""

from predictor.tasks_wait import run_evaluation

__all__ = ["run_evaluation"]
