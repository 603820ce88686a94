"""The accuracy an answer shows: its methods' errors on the most recent jobs, online.

Over a fitted log (the trace or a site's history) at instant ``at_s``: the runtime method's
success and coverage on the ``n`` jobs that most recently *ended* by ``at_s``, each predicted
from what was known at its own arrival, next to the requested-time answer's
(``predictor.core.runtime.recent``; :mod:`predictor.core.accuracy` has the formulas and the
"no better than" rules). The wait
side comes from the wait method's recent errors (``predictor.core.wait.recent``), seen here
as a :class:`~predictor.core.accuracy.WaitAccuracy` with always-zero beside it.
"""

from __future__ import annotations

import numpy as np

from predictor.core.accuracy import DEFAULT_RECENT, RuntimeAccuracy, WaitAccuracy
from predictor.core.runtime.history import RuntimeContext
from predictor.core.runtime.peers import BaselineRange, RequestedTime
from predictor.core.runtime.recent import recent_runtime_accuracy
from predictor.core.runtime.row_scores import RuntimeRowScores
from predictor.core.runtime.types import RuntimeMethod


def runtime_accuracy_at(
    method: RuntimeMethod, ctx: RuntimeContext, at_s: float, n: int = DEFAULT_RECENT
) -> RuntimeAccuracy:
    """``method``'s success and coverage on the last ``n`` jobs ended by ``at_s`` beside the
    requested time's, each job predicted at its own arrival
    (``predictor.core.runtime.recent``, with the requested and baseline peers of ``ctx``)."""
    return kept_runtime_accuracy_at(runtime_row_scores(method, ctx), at_s, n)


def kept_runtime_accuracy_at(
    scores: RuntimeRowScores, at_s: float, n: int = DEFAULT_RECENT
) -> RuntimeAccuracy:
    """:func:`runtime_accuracy_at` of ``scores``' method, from the rows' terms kept across
    instants (:func:`runtime_row_scores`): only the rows not asked before are predicted."""
    return recent_runtime_accuracy(
        scores.method, scores.requested, scores.baseline, at_s, n, scores=scores
    )


def runtime_row_scores(method: RuntimeMethod, ctx: RuntimeContext) -> RuntimeRowScores:
    """An empty :class:`RuntimeRowScores` of ``method`` on ``ctx``, beside the requested-time
    and baseline peers :func:`runtime_accuracy_at` compares it with."""
    return RuntimeRowScores(
        method, RequestedTime().fit(ctx), BaselineRange().fit(ctx), len(ctx.run_s)
    )


def wait_accuracy(jobs: int, aae_s: float, mean_wait_s: float) -> WaitAccuracy:
    """A wait method's recent AAE beside always-zero's (= the mean actual wait, same jobs)."""
    if jobs <= 0 or not np.isfinite(aae_s):
        return WaitAccuracy(0, float("nan"), float("nan"))
    return WaitAccuracy(int(jobs), float(aae_s), float(mean_wait_s))


def runtime_scores_on_rows(
    method: RuntimeMethod, ctx: RuntimeContext, rows: np.ndarray
) -> dict[str, float]:
    """Success and coverage of ``method`` and of the requested time on ``rows`` (each job
    predicted at its own arrival): the seed's two runtime measures over a test sample."""
    rows = np.asarray(rows, dtype=np.int64)
    run = ctx.run_s[rows]
    base = BaselineRange().fit(ctx).predict_rows(rows).length_s
    has = base > 0
    out: dict[str, float] = {"jobs": float(rows.size)}
    for name, model in (("method", method), ("requested", RequestedTime().fit(ctx))):
        pred = model.predict_rows(rows)
        out[f"{name}_success"] = float(np.mean(pred.contains(run))) if rows.size else float("nan")
        out[f"{name}_coverage"] = (
            float(pred.length_s[has].sum() / base[has].sum()) if has.any() else float("nan")
        )
    return out
