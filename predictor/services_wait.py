"""Glue for queue-wait prediction: evaluation runs and single predictions over stored traces.

The numeric work lives in ``predictor.core``; here rows are loaded and stored, and fitted
models are kept per trace in a small in-process LRU cache so repeated API calls are fast.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from predictor import services_runtime
from predictor.core.wait.evaluate import Evaluation, evaluate_trace
from predictor.core.wait.qbets import QBETS
from predictor.core.wait.registry import DEFAULT_METHODS, make_methods, parse_methods
from predictor.core.wait.types import WaitContext
from predictor.fitted_cache import FittedCache
from predictor.models import EvaluationRun
from pyss_adapter.core.replay import with_simulated_waits
from queuecast.errors import ConflictError, InvalidInput
from queuecast.longrun import Claim, Status, enqueue, execute
from traces.core.swf import SwfTrace, read_swf
from traces.models import Trace
from traces.services import swf_trace_for

API_TUNE_FRACTION = 0.2  # the API's models learn from the same share as the default evaluation
CACHE_SIZE = 4


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
        methods = services_runtime.parse_methods(methods)
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
        services_runtime.run_runtime_evaluation(claim.pk, claim.progress)
    else:
        run_wait_evaluation(claim.pk, claim.progress)


def load_swf(run: EvaluationRun) -> SwfTrace:
    swf = swf_trace_for(run.trace) if run.trace_id else read_swf(run.swf_path)
    return with_replayed_waits(swf) if run.params.get("simulate_waits") else swf


def with_replayed_waits(swf: SwfTrace) -> SwfTrace:
    """The same trace with waits from an EASY replay (for logs that carry none)."""
    procs = int(swf.machine_procs or 1)
    jobs = with_simulated_waits(swf.jobs, procs)
    return SwfTrace(header=swf.header, jobs=jobs, report=swf.report, name=swf.name)


def evaluate_swf(
    swf: SwfTrace, methods: list[str], params: dict[str, Any], progress: Any = None
) -> Evaluation:
    """Run the harness on a parsed trace with the run's parameters."""
    return evaluate_trace(
        swf.jobs,
        int(swf.machine_procs or 1),
        make_methods(methods, params.get("seed", 0)),
        tune_fraction=params.get("tune_fraction", 0.2),
        limit=params.get("limit"),
        seed=params.get("seed", 0),
        progress=progress,
    )


def store_result(run_id: int, evaluation: Evaluation, seconds: float) -> None:
    """Finish the row: result = per-method dict; selection and timings go to ``params``."""
    run = EvaluationRun.objects.get(pk=run_id)
    params = {
        **run.params,
        "selection": evaluation.selection.as_dict(),
        "state_s": evaluation.state_s,
        "elapsed_s": seconds,
    }
    EvaluationRun.finish(run_id, result=evaluation.results, params=params)


def run_wait_evaluation(run_id: int, progress: Any = None) -> dict[str, Any]:
    """The task's work: evaluate the run's trace and store the result on the row."""
    run = EvaluationRun.objects.get(pk=run_id)
    started = time.perf_counter()
    evaluation = evaluate_swf(load_swf(run), run.methods, run.params, progress)
    store_result(run_id, evaluation, time.perf_counter() - started)
    return evaluation.results


# --- single predictions ---------------------------------------------------------------------


@dataclass
class FittedTrace:
    """The models the API answers with, fitted once per trace."""

    ctx: WaitContext
    apq: Any
    qbets: QBETS
    fit_s: float


MODELS: FittedCache[FittedTrace] = FittedCache(CACHE_SIZE, lambda trace: fit_trace(trace))


def fit_trace(trace: Trace) -> FittedTrace:
    """State sweep, APQ and QBETS for a stored trace."""
    from predictor.core.wait.apq import APQ
    from predictor.core.wait.evaluate import build_context

    started = time.perf_counter()
    swf = swf_trace_for(trace)
    if not (swf.jobs["wait_time"] >= 0).any():
        raise ConflictError(
            f"trace {trace.name!r} has no known waits (SWF field 3 is -1 for every job), so there "
            "is no history to predict from; evaluate it with `evaluate_wait --simulate-waits`"
        )
    n_tune = int(API_TUNE_FRACTION * len(swf.jobs))
    ctx, _ = build_context(swf.jobs, int(trace.machine_procs or swf.machine_procs or 1), n_tune)
    apq = APQ().fit(ctx)
    qbets = QBETS().fit(ctx)
    qbets.predict_at(ctx, 1, 0.0)  # builds the replay once, here rather than on a request
    return FittedTrace(ctx=ctx, apq=apq, qbets=qbets, fit_s=time.perf_counter() - started)


def resolve_queue(queues: Any, queue_id: int) -> int:
    """The queue a query means: -1 (not given) is the trace's only queue.

    History and state are per queue (spec), so a query in a queue the trace does not
    have would see no history at all; it is rejected naming the field.
    """
    known = sorted(int(q) for q in set(queues.tolist()))
    if queue_id == -1 and len(known) == 1:
        return known[0]
    if queue_id not in known:
        shown = ", ".join(map(str, known[:20])) + (" ..." if len(known) > 20 else "")
        raise InvalidInput(f"queue_id {queue_id} is not a queue of this trace ({shown})",
                           field="queue_id")  # fmt: skip
    return queue_id


def predict_wait(trace: Trace, job: dict[str, Any]) -> dict[str, Any]:
    """APQ's wait for ``job`` submitted at ``job["at"]``, with the QBETS point and bound."""
    from predictor.core.wait.apq import predict_single

    if trace.status != Status.DONE:
        raise ConflictError(f"trace {trace.name!r} is {trace.status}; only done traces predict")
    fitted = MODELS.get(trace)
    at = float(job["at"])
    job = {**job, "queue_id": resolve_queue(fitted.ctx.jobs["queue_id"], job.get("queue_id", -1))}
    apq = predict_single(fitted.ctx, job, at, fitted.apq)
    qb = fitted.qbets.predict_at(fitted.ctx, int(job["requested_procs"]), at)
    return {
        "wait_s": float(apq.wait_s[0]),
        "predictor": None if apq.predictor is None else str(apq.predictor[0]),
        "support": None if apq.support is None else int(apq.support[0]),
        "qbets_upper_s": float(qb.upper_s[0]),
        "qbets_point_s": float(qb.wait_s[0]),
        "at": at,
    }
