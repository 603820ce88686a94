"""Glue for runtime prediction: evaluation runs, single rangeSet predictions, load functions.

The numeric work lives in ``predictor.core`` (``rangeset``, ``runtime_peers``, ``smith``,
``runtime_eval``); here traces are loaded, fitted models are kept per trace in a small
in-process LRU, and results are stored on ``EvaluationRun`` rows.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from predictor.core.runtime.evaluate import METHODS, evaluate_runtime
from predictor.core.runtime.history import RuntimeContext, build_context
from predictor.core.runtime.load_functions import LoadFunction
from predictor.core.runtime.params import RuntimeParams
from predictor.core.runtime.rangeset import RangeSet, RangeSetPredictor
from predictor.fitted_cache import FittedCache
from predictor.models import EvaluationRun
from queuecast.errors import ConflictError, InvalidInput
from queuecast.longrun import Status
from traces.core.swf import SwfTrace, read_swf
from traces.models import Trace
from traces.services import swf_trace_for

CACHE_SIZE = 4


# --- evaluation runs ------------------------------------------------------------------------


def parse_methods(methods: list[str] | str | None) -> list[str]:
    """Method names from a list or a comma-separated string; unknown names raise
    ``InvalidInput`` naming the field."""
    if methods is None or methods == "" or methods == []:
        return list(METHODS)
    names = methods.split(",") if isinstance(methods, str) else list(methods)
    names = [n.strip() for n in names if n.strip()]
    unknown = [n for n in names if n not in METHODS]
    if unknown or not names:
        raise InvalidInput(
            f"unknown runtime methods {unknown}; choose from {', '.join(METHODS)}", field="methods"
        )
    return list(dict.fromkeys(names))


def params_of(run_params: dict[str, Any]) -> RuntimeParams:
    """RuntimeParams from a run's ``params`` (only the known keys; the rest keep defaults)."""
    known = RuntimeParams().as_dict()
    return RuntimeParams(**{k: v for k, v in run_params.items() if k in known})


def evaluate_swf(
    swf: SwfTrace, methods: list[str], run_params: dict[str, Any], progress: Any = None
) -> dict[str, Any]:
    """The harness on a parsed trace; returns the full evaluation dict."""
    return evaluate_runtime(
        swf.jobs,
        float(swf.machine_procs or 1),
        tuple(parse_methods(methods)),
        params=params_of(run_params),
        limit=run_params.get("limit"),
        progress=progress,
    )


def run_runtime_evaluation(run_id: int, progress: Any = None) -> dict[str, Any]:
    """Evaluate a (claimed) runtime ``EvaluationRun`` and store the result on it.

    ``result`` is ``{method: metrics}``; the split, timings and learned functions count go
    to ``params``.
    """
    run = EvaluationRun.objects.select_related("trace").get(pk=run_id)
    swf = swf_trace_for(run.trace) if run.trace_id else read_swf(run.swf_path)
    evaluation = evaluate_swf(swf, run.methods, run.params, progress)
    store_result(run_id, evaluation)
    return evaluation["methods"]


def store_result(run_id: int, evaluation: dict[str, Any]) -> None:
    run = EvaluationRun.objects.get(pk=run_id)
    meta = {k: v for k, v in evaluation.items() if k != "methods"}
    EvaluationRun.finish(run_id, result=evaluation["methods"], params={**run.params, **meta})


# --- fitted traces for the API --------------------------------------------------------------


@dataclass
class FittedRuntime:
    ctx: RuntimeContext
    model: RangeSetPredictor
    fit_s: float


MODELS: FittedCache[FittedRuntime] = FittedCache(CACHE_SIZE, lambda trace: fit_trace(trace))


def fit_trace(trace: Trace) -> FittedRuntime:
    """Context and load functions of a stored trace (functions from the first 20 %)."""
    started = time.perf_counter()
    swf = swf_trace_for(trace)
    procs = float(trace.machine_procs or swf.machine_procs or 1)
    ctx = build_context(swf.jobs, procs, RuntimeParams())
    model = RangeSetPredictor().fit(ctx)
    return FittedRuntime(ctx=ctx, model=model, fit_s=time.perf_counter() - started)


def _ready(trace: Trace) -> FittedRuntime:
    if trace.status != Status.DONE:
        raise ConflictError(f"trace {trace.name!r} is {trace.status}; only done traces predict")
    return MODELS.get(trace)


def predict_runtime(trace: Trace, query: dict[str, Any]) -> dict[str, Any]:
    """The rangeSet for a request submitted at ``query["at"]`` (only what was known then)."""
    fitted = _ready(trace)
    codes = fitted.ctx.key_codes(
        int(query["user_id"]),
        int(query["requested_procs"]),
        int(query["queue_id"]),
        int(query["group_id"]),
    )
    rs = fitted.model.predict_one(
        fitted.ctx, codes, float(query["at"]), float(query["requested_time"])
    )
    return rangeset_body(rs, float(query["at"]))


def rangeset_body(rs: RangeSet, at: float) -> dict[str, Any]:
    ranges = [
        {"low_s": float(lo), "high_s": float(hi), "probability": float(p)}
        for lo, hi, p in zip(rs.low_s, rs.high_s, rs.probability, strict=True)
    ]
    return {
        "ranges": ranges,
        "point_s": rs.point_s,
        "level": rs.level,
        "support": rs.support,
        "at": at,
    }


def load_functions(trace: Trace) -> dict[str, Any]:
    """The learned load functions of a trace, with how they were learned."""
    fitted = _ready(trace)
    return {
        "tune_jobs": fitted.ctx.n_tune,
        "machine_procs": fitted.ctx.machine_procs,
        "functions": [function_body(f) for f in fitted.model.functions_],
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
