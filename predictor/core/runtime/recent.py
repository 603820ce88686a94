"""A fitted runtime method's accuracy on the jobs that most recently ended (for the pages).

The ``n`` jobs of the fitted log with a positive runtime that ended by ``known_at_s`` are
re-answered at their own arrival by the method, by the requested-time answer and by the
baseline (whose lengths are the coverage's denominator), then summarised by
:func:`predictor.core.accuracy.recent_runtime_accuracy`. No evaluation run is needed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from predictor.core.accuracy import DEFAULT_RECENT, RuntimeAccuracy, recent_order
from predictor.core.accuracy import recent_runtime_accuracy as summarise
from predictor.core.runtime.history import RuntimeContext


def recent_rows(ctx: RuntimeContext, known_at_s: float, n: int = DEFAULT_RECENT) -> np.ndarray:
    """Rows (oldest first by end) of the ``n`` jobs with a runtime that ended by
    ``known_at_s`` (an end at that very second counts, as for a job asked about after it)."""
    end = np.where(ctx.run_s > 0, ctx.end_s, np.inf)
    return recent_order(end, known_at_s, n)


def recent_runtime_accuracy(
    method: Any,
    requested: Any,
    baseline: Any,
    known_at_s: float,
    n: int = DEFAULT_RECENT,
) -> RuntimeAccuracy:
    """Module docstring; the three arguments are runtime methods fitted on the same context
    (``requested`` and ``baseline`` are the registry's peers of those names)."""
    ctx: RuntimeContext = method.history_
    rows = recent_rows(ctx, known_at_s, n)
    if rows.size == 0:
        return summarise(*(np.zeros(0),) * 6, known_at_s=known_at_s, n=n)
    run = ctx.run_s[rows]
    got = method.predict_rows(rows)
    req = requested.predict_rows(rows)
    return summarise(
        success=got.contains(run), length_s=got.length_s,
        requested_success=req.contains(run), requested_length_s=req.length_s,
        baseline_length_s=baseline.predict_rows(rows).length_s, end_s=ctx.end_s[rows],
        known_at_s=known_at_s, n=n,
    )  # fmt: skip
