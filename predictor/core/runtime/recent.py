"""A fitted runtime method's accuracy on the jobs that most recently ended (for the pages).

The ``n`` jobs of the fitted log with a positive runtime that ended by ``known_at_s`` are
re-answered at their own arrival by the method, by the requested-time answer and by the
baseline (whose lengths are the coverage's denominator), then summarised by
:func:`predictor.core.accuracy.recent_runtime_accuracy`. No evaluation run is needed. With a
:class:`~predictor.core.runtime.row_scores.RuntimeRowScores`, each row is answered once for
every instant (the same numbers).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from predictor.core.accuracy import DEFAULT_RECENT, RuntimeAccuracy
from predictor.core.accuracy import recent_runtime_accuracy as summarise
from predictor.core.runtime.history import RuntimeContext
from predictor.core.runtime.row_scores import (
    BASELINE_LENGTH,
    LENGTH,
    REQUESTED_LENGTH,
    REQUESTED_SUCCESS,
    SUCCESS,
    RuntimeRowScores,
)


def recent_rows(ctx: RuntimeContext, known_at_s: float, n: int = DEFAULT_RECENT) -> np.ndarray:
    """Rows (oldest first by end) of the ``n`` jobs with a runtime that ended by
    ``known_at_s`` (an end at that very second counts, as for a job asked about after it)."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    ends, order = ctx.ended_order
    k = int(np.searchsorted(ends, known_at_s, "right"))
    return order[max(k - n, 0) : k]


def recent_runtime_accuracy(
    method: Any,
    requested: Any,
    baseline: Any,
    known_at_s: float,
    n: int = DEFAULT_RECENT,
    scores: RuntimeRowScores | None = None,
) -> RuntimeAccuracy:
    """Module docstring; the three arguments are runtime methods fitted on the same context
    (``requested`` and ``baseline`` are the registry's peers of those names). ``scores``:
    the rows' terms kept across instants (built on the same three methods)."""
    ctx: RuntimeContext = method.history_
    rows = recent_rows(ctx, known_at_s, n)
    if rows.size == 0:
        return summarise(*(np.zeros(0),) * 6, known_at_s=known_at_s, n=n)
    if scores is None:
        scores = RuntimeRowScores(method, requested, baseline, len(ctx.run_s))
    terms = scores.terms(rows)
    return summarise(
        success=terms[:, SUCCESS].astype(bool), length_s=terms[:, LENGTH],
        requested_success=terms[:, REQUESTED_SUCCESS].astype(bool),
        requested_length_s=terms[:, REQUESTED_LENGTH],
        baseline_length_s=terms[:, BASELINE_LENGTH], end_s=ctx.end_s[rows],
        known_at_s=known_at_s, n=n,
    )  # fmt: skip
