"""Glue for queue-wait prediction: evaluation runs and single predictions over stored traces.

The numeric work lives in ``predictor.core``; here rows are loaded and stored, and fitted
models are kept per trace in a small in-process LRU cache so repeated API calls are fast.
"""

from __future__ import annotations

import time
from typing import Any

from predictor.core.chunks import ChunkRunner
from predictor.core.wait.evaluate import Evaluation, evaluate_trace
from predictor.core.wait.registry import DEFAULT_METHODS, make_methods, parse_methods
from predictor.models import EvaluationRun
from predictor.services import fanout, runtime
from predictor.services.predict import BUNDLES as MODELS  # noqa: F401  (one cache: the bundle's)
from predictor.services.predict import predict_wait  # noqa: F401  (the pages' entry)
from predictor.services.run_inputs import load_swf, with_replayed_waits  # noqa: F401  (the command's)
from queuecast.errors import ConflictError, InvalidInput
from queuecast.longrun import Claim, Status, enqueue, execute
from traces.core.swf import SwfTrace
from traces.models import Trace

# --- evaluation runs ------------------------------------------------------------------------


def new_run(
    *,
    kind: str,
    owner: Any = None,
    trace: Trace | None = None,
    swf_path: str = "",
    methods: list[str] | None = None,
    params: dict[str, Any] | None = None,
) -> EvaluationRun:
    """A pending evaluation row; wait methods are checked here (``InvalidInput``, 400)."""
    if kind == EvaluationRun.Kind.WAIT:
        try:
            methods = parse_methods(methods or list(DEFAULT_METHODS))
        except ValueError as exc:
            raise InvalidInput(str(exc), field="methods") from exc
    else:  # runtime: unknown names are an InvalidInput (400) naming the field, as for wait
        methods = runtime.parse_methods(methods)
    if trace is not None and trace.status != Status.DONE:
        raise ConflictError(f"trace {trace.name!r} is {trace.status}; only done traces evaluate")
    return EvaluationRun.objects.create(
        kind=kind,
        owner=owner,
        trace=trace,
        swf_path=swf_path,
        methods=methods or [],
        params=params or {},
    )


def start_run(run: EvaluationRun) -> None:
    """Enqueue the evaluation task once the row is committed (by name: no task import)."""
    enqueue(run, "predictor.tasks_wait.run_evaluation")


def run_pending_evaluation(run_id: int) -> str:
    """The task's body: claim the run, evaluate it (wait or runtime), end the row."""
    return execute(EvaluationRun, run_id, _evaluate_claimed)


def _evaluate_claimed(claim: Claim) -> None:
    """Both kinds store their result on the row themselves (``store_result``)."""
    run = EvaluationRun.objects.get(pk=claim.pk)
    if run.kind == EvaluationRun.Kind.RUNTIME:
        runtime.run_runtime_evaluation(claim.pk, claim.progress)
    else:
        run_wait_evaluation(claim.pk, claim.progress)


def evaluate_swf(
    swf: SwfTrace,
    methods: list[str],
    params: dict[str, Any],
    progress: Any = None,
    runner: ChunkRunner | None = None,
) -> Evaluation:
    """Run the harness on a parsed trace with the run's parameters (chunks answered by
    ``runner`` when given, else in ``params["jobs"]`` local processes)."""
    return evaluate_trace(
        swf.jobs,
        int(swf.machine_procs or 1),
        make_methods(methods, params.get("seed", 0)),
        tune_fraction=params.get("tune_fraction", 0.2),
        limit=params.get("limit"),
        seed=params.get("seed", 0),
        progress=progress,
        n_jobs=params.get("jobs", 1),
        runner=runner,
    )


def store_result(
    run_id: int, evaluation: Evaluation, seconds: float, extra: dict[str, Any] | None = None
) -> None:
    """Finish the row: result = per-method dict; selection and timings go to ``params``."""
    run = EvaluationRun.objects.get(pk=run_id)
    params = {
        **run.params,
        "selection": evaluation.selection.as_dict(),
        "state_s": evaluation.state_s,
        "elapsed_s": seconds,
        **(extra or {}),
    }
    EvaluationRun.finish(run_id, result=evaluation.results, params=params)


def run_wait_evaluation(run_id: int, progress: Any = None) -> dict[str, Any]:
    """The task's work: evaluate the run's trace and store the result on the row."""
    run = EvaluationRun.objects.get(pk=run_id)
    started = time.perf_counter()
    runner = fanout.runner_for(run)
    evaluation = evaluate_swf(load_swf(run), run.methods, run.params, progress, runner)
    extra = {"fanout": runner.summary()} if runner is not None else None
    store_result(run_id, evaluation, time.perf_counter() - started, extra)
    return evaluation.results
