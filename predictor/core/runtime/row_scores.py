"""Each log row's runtime-accuracy terms, computed once and kept.

The recent runtime accuracy at an instant (:mod:`predictor.core.runtime.recent`) sums five
terms over the ``n`` jobs that ended last: whether the method's rangeSet, answered at the
job's own arrival, held its runtime; that rangeSet's length; the same two for the
requested-time answer; and the baseline ``[min, max]`` length. Each term depends on the row
only, never on the instant asked about or on the other rows of the batch (the contract test's
"batched == one by one"; bit for bit on every registered runtime method). Consecutive
instants share all but the jobs that ended in between, so the terms are kept per row: a new
instant predicts only the rows no instant needed before, instead of all ``n`` again
(issue 18: per-instant work kept up to date incrementally as jobs end).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

# Columns of ``RuntimeRowScores.values``.
SUCCESS, LENGTH, REQUESTED_SUCCESS, REQUESTED_LENGTH, BASELINE_LENGTH = range(5)


class RuntimeRowScores:
    """Memoised runtime-accuracy terms of the ``n_rows`` rows of a fitted runtime context.

    ``terms(rows)`` gives the five columns above for ``rows`` (successes as 0/1), the same
    numbers as answering ``rows`` with ``method``, ``requested`` and ``baseline`` (runtime
    methods fitted on the same context), and predicts only the rows not asked before, in one
    batched call per method. Thread-safe as :class:`~predictor.core.wait.row_memo.RowWaitMemo`
    (whose ``values`` / ``known`` layout it shares, so the store keeps both the same way).
    """

    def __init__(self, method: Any, requested: Any, baseline: Any, n_rows: int) -> None:
        self.method, self.requested, self.baseline = method, requested, baseline
        self.values = np.zeros((n_rows, 5))
        self.known = np.zeros(n_rows, dtype=bool)
        self.lock = threading.Lock()
        self.predicted = 0  # rows predicted so far

    def terms(self, rows: np.ndarray) -> np.ndarray:
        """(len(rows), 5) terms of log ``rows``, each answered at its own arrival."""
        rows = np.asarray(rows, dtype=np.int64)
        with self.lock:
            missing = np.unique(rows[~self.known[rows]])
        if missing.size:
            got = self._compute(missing)
            with self.lock:
                self.values[missing] = got
                self.known[missing] = True
                self.predicted += int(missing.size)
        return self.values[rows].copy()

    def _compute(self, rows: np.ndarray) -> np.ndarray:
        run = self.method.history_.run_s[rows]
        got = self.method.predict_rows(rows)
        req = self.requested.predict_rows(rows)
        out = np.empty((rows.size, 5))
        out[:, SUCCESS] = got.contains(run)
        out[:, LENGTH] = got.length_s
        out[:, REQUESTED_SUCCESS] = req.contains(run)
        out[:, REQUESTED_LENGTH] = req.length_s
        out[:, BASELINE_LENGTH] = self.baseline.predict_rows(rows).length_s
        return out

    def fill(self, rows: np.ndarray, chunk: int = 2000) -> None:
        """Score ``rows`` ahead of time (a background warm-up), ``chunk`` rows per call."""
        rows = np.asarray(rows, dtype=np.int64)
        for lo in range(0, rows.size, chunk):
            self.terms(rows[lo : lo + chunk])
