"""Celery task of evaluation runs (wait and runtime): take the run id, call one service."""

from __future__ import annotations

import logging

from celery import shared_task

from predictor.models import EvaluationRun
from queuecast.progress import throttled

logger = logging.getLogger(__name__)


@shared_task(acks_late=True, reject_on_worker_lost=True)
def run_evaluation(run_id: int) -> str:
    """Claim a pending run and evaluate it; a duplicate delivery finds it claimed and stops."""
    if not EvaluationRun.claim(run_id):
        return "skipped"
    run = EvaluationRun.objects.get(pk=run_id)
    progress = throttled(lambda f: EvaluationRun.set_progress(run_id, f))
    try:
        if run.kind == EvaluationRun.Kind.WAIT:
            from predictor.services_wait import run_wait_evaluation

            run_wait_evaluation(run_id, progress)
        else:
            from predictor.services_runtime import run_runtime_evaluation

            result = run_runtime_evaluation(run_id, progress)
            still_running = EvaluationRun.objects.filter(pk=run_id, status="running").exists()
            if still_running:  # the runtime service may leave finishing to us
                EvaluationRun.finish(run_id, result=result if isinstance(result, dict) else {})
    except Exception as exc:  # the row records the failure; the worker stays alive
        logger.exception("evaluation run %s failed", run_id)
        EvaluationRun.fail(run_id, f"{type(exc).__name__}: {exc}")
        return "failed"
    return EvaluationRun.objects.values_list("status", flat=True).get(pk=run_id)
