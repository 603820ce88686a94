"""Each log row's online wait prediction, computed once and kept.

A method's answer for log row ``i`` (``predict_rows([i])``) depends only on the row and what
was known at its arrival, never on which other rows are asked for (the contract test's
"batched == one by one"). So the answers can be memoised per row: the recent-error pool of
an API answer (``predictor.core.wait.recent``) re-scores the ~300 jobs that most recently
started, and consecutive instants share almost all of them. With the memo, each row is
predicted once per fitted method, whatever the number of requests.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np


class RowWaitMemo:
    """Memoised ``method.predict_rows`` for a fitted method's log of ``n_rows`` rows.

    ``wait_s(rows)`` returns the same numbers as ``method.predict_rows(rows).wait_s`` and
    predicts only the rows not asked before (in one batched call). Thread-safe: the
    prediction runs outside the lock; two threads may predict the same row, with the same
    answer.
    """

    def __init__(self, method: Any, n_rows: int) -> None:
        self.method = method
        self.values = np.zeros(n_rows)
        self.known = np.zeros(n_rows, dtype=bool)
        self.lock = threading.Lock()
        self.predicted = 0  # rows predicted so far (what the memo saved shows against it)

    def wait_s(self, rows: np.ndarray) -> np.ndarray:
        """(len(rows),) predicted waits of log ``rows``, each at its own arrival."""
        rows = np.asarray(rows, dtype=np.int64)
        with self.lock:
            missing = np.unique(rows[~self.known[rows]])
        if missing.size:
            got = np.asarray(self.method.predict_rows(missing).wait_s, dtype=float)
            with self.lock:
                self.values[missing] = got
                self.known[missing] = True
                self.predicted += int(missing.size)
        return self.values[rows].copy()

    def fill(self, rows: np.ndarray, chunk: int = 2000) -> None:
        """Predict ``rows`` ahead of time (a background warm-up), ``chunk`` rows per call."""
        rows = np.asarray(rows, dtype=np.int64)
        for lo in range(0, rows.size, chunk):
            self.wait_s(rows[lo : lo + chunk])
