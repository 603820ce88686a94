"""Glue for runtime prediction: evaluation runs and the learned load functions of a trace.

The numeric work lives in ``predictor.core.runtime``; single predictions go through the
trace's one fitted bundle (:mod:`predictor.services.predict`); evaluation results are stored
on ``EvaluationRun`` rows.
"""

from __future__ import annotations

from typing import Any

from predictor.core.chunks import ChunkRunner
from predictor.core.runtime.evaluate import evaluate_runtime
from predictor.core.runtime.load_functions import LoadFunction
from predictor.core.runtime.registry import parse_methods as parse_names
from predictor.models import EvaluationRun
from predictor.services import fanout
from predictor.services.predict import BUNDLES as MODELS  # noqa: F401  (one cache: the bundle's)
from predictor.services.predict import (
    bundle_for,
    predict_runtime,  # noqa: F401  (the pages' entry)
)
from predictor.services.run_inputs import load_swf, params_of
from queuecast.errors import InvalidInput
from traces.core.swf import SwfTrace
from traces.models import Trace

# --- evaluation runs ------------------------------------------------------------------------


def parse_methods(methods: list[str] | str | None) -> list[str]:
    """Method names from a list or a comma-separated string (all when empty); unknown names
    raise ``InvalidInput`` (400) naming the field."""
    try:
        return parse_names(methods)
    except ValueError as exc:
        raise InvalidInput(str(exc), field="methods") from exc


def evaluate_swf(
    swf: SwfTrace,
    methods: list[str],
    run_params: dict[str, Any],
    progress: Any = None,
    runner: ChunkRunner | None = None,
) -> dict[str, Any]:
    """The harness on a parsed trace; returns the full evaluation dict (chunks answered by
    ``runner`` when given, else in ``run_params["jobs"]`` local processes)."""
    return evaluate_runtime(
        swf.jobs,
        float(swf.machine_procs or 1),
        tuple(parse_methods(methods)),
        params=params_of(run_params),
        limit=run_params.get("limit"),
        progress=progress,
        n_jobs=run_params.get("jobs", 1),
        runner=runner,
    )


def run_runtime_evaluation(run_id: int, progress: Any = None) -> dict[str, Any]:
    """Evaluate a (claimed) runtime ``EvaluationRun`` and store the result on it.

    ``result`` is ``{method: metrics}``; the split, timings and learned functions count go
    to ``params``.
    """
    run = EvaluationRun.objects.select_related("trace").get(pk=run_id)
    runner = fanout.runner_for(run)
    evaluation = evaluate_swf(load_swf(run), run.methods, run.params, progress, runner)
    if runner is not None:
        evaluation["fanout"] = runner.summary()
    store_result(run_id, evaluation)
    return evaluation["methods"]


def store_result(run_id: int, evaluation: dict[str, Any]) -> None:
    run = EvaluationRun.objects.get(pk=run_id)
    meta = {k: v for k, v in evaluation.items() if k != "methods"}
    EvaluationRun.finish(run_id, result=evaluation["methods"], params={**run.params, **meta})


# --- learned load functions -----------------------------------------------------------------


def load_functions(trace: Trace) -> dict[str, Any]:
    """The load functions the trace's rangeSet method learned, with how they were learned."""
    bundle = bundle_for(trace)
    functions = getattr(bundle.runtime, "functions_", [])
    return {
        "tune_jobs": bundle.runtime_ctx.n_tune,
        "machine_procs": bundle.runtime_ctx.machine_procs,
        "functions": [function_body(f) for f in functions],
    }


def function_body(f: LoadFunction) -> dict[str, Any]:
    user, size, queue, group = f.tuple_key
    return {
        "tuple": {"user_id": user, "requested_procs": size, "queue_id": queue, "group_id": group},
        "slope": f.slope,
        "intercept": f.intercept,
        "n_jobs": f.n_jobs,
        "chain": [
            {"load": float(x), "runtime_s": float(y)}
            for x, y in zip(f.chain_loads, f.chain_runtimes, strict=True)
        ],
    }
