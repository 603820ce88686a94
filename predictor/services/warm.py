"""Warm-ups: every row of a trace predicted once, for every process.

An answer at a past instant needs the wait method's predictions of the ~300 jobs that started
last (``predict.trust``) and the runtime method's terms on the 100 that ended last
(``predict.accuracy_body``); each is computed once per row and kept in the store
(``predictor.services.shared_rows``). These functions compute them ahead for a whole trace:
``manage.py warm_predictions`` (``scripts/serve`` at start-up) and the fit's child
(``manage.py fit_model``, once the bundle is stored) call :func:`warm_trace`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from predictor.services import shared_rows
from predictor.services.fitted_cache import store_key
from predictor.services.fitted_store import default_store
from predictor.services.predict import BUNDLES, bundle_for, recent_scorer, runtime_scores
from traces.models import Trace

MERGE_EVERY = 10  # chunks between two merges into the store while warming


def warm_rows(trace: Trace, progress: Any = None, chunk: int = 2000) -> int:
    """Predict every row of the trace with a known start once, at its own arrival, and store
    the answers for every process: any past instant then finds its recent errors' rows
    stored. Returns the rows predicted now (the rest were known). Stored every
    :data:`MERGE_EVERY` chunks, so a warm-up stopped half-way keeps what it did.

    The tuning part's rows cost what the others do since its models are trained in blocks
    (``predictor.core.state.retrain``); until stop 52 each had a GBM model of its own and
    warming them took over 25 CPU-minutes on KTH, so they were left out."""
    bundle = bundle_for(trace, block=True)
    scorer = recent_scorer(bundle, trace)
    rows = np.sort(scorer.known.order)
    return _warm(scorer.memo, rows, trace, "rows", scorer.memo.wait_s, progress, chunk)


def _warm(
    memo: Any, rows: np.ndarray, trace: Trace, kind: str, compute: Any, progress: Any, chunk: int
) -> int:
    """``compute`` ``rows`` chunk by chunk into ``memo`` (after reading the rows other
    processes stored since, which it then skips), merged into the store's ``kind`` file every
    :data:`MERGE_EVERY` chunks and at the end; the rows computed here."""
    store, (ident, version) = default_store(), store_key(trace)
    shared_rows.read_into(store, ident, version, memo, kind)
    before = memo.predicted
    for k, lo in enumerate(range(0, rows.size, chunk)):
        compute(rows[lo : lo + chunk])
        if progress is not None:
            progress(min(1.0, (lo + chunk) / max(rows.size, 1)))
        if (k + 1) % MERGE_EVERY == 0:
            shared_rows.merge_into_store(store, ident, version, memo, kind)
    shared_rows.merge_into_store(store, ident, version, memo, kind)
    return memo.predicted - before


ROWS_SHARE = 0.7  # of :func:`warm_trace`'s progress: the waits (KTH: 44 s against 18 s)


def warm_trace(trace: Trace, progress: Any = None) -> tuple[int, int] | None:
    """:func:`warm_rows` then :func:`warm_runtime_rows` (rows predicted, runtimes scored),
    unless another process is warming this trace (None): single flight under the store's
    ``warm`` lock, taken without waiting. ``progress`` gets one fraction for both (the waits
    the first :data:`ROWS_SHARE` of it)."""

    def part(lo: float, hi: float) -> Any:
        return None if progress is None else (lambda f: progress(lo + (hi - lo) * f))

    with default_store().lock("warm", store_key(trace)[0], blocking=False) as got:
        if not got:
            return None
        return (
            warm_rows(trace, progress=part(0.0, ROWS_SHARE)),
            warm_runtime_rows(trace, progress=part(ROWS_SHARE, 1.0)),
        )


def warm_runtime_rows(trace: Trace, progress: Any = None, chunk: int = 2000) -> int:
    """Score every row of the trace with a runtime once for the runtime accuracy
    (``predictor.core.runtime.row_scores``) and store the terms for every process: any past
    instant then answers no job again. Returns the rows scored now."""
    bundle = bundle_for(trace, block=True)
    scores = runtime_scores(bundle)
    rows = np.sort(bundle.runtime_ctx.ended_order[1])
    kind = f"runtime_rows-{BUNDLES.kind}"
    return _warm(scores, rows, trace, kind, scores.terms, progress, chunk)
