"""Simple queue-wait baselines a user would try first (docs/apq.md, "Peers to implement").

* :class:`ZeroWait` always answers 0 s (the floor any method must beat on AAE).
* :class:`RecentMedian` answers the median wait of the most recent ``window`` jobs of the
  target's size class (1-4, 5-16, 17-64, 65+ processors) that had started by its arrival.
"""

from __future__ import annotations

import numpy as np

from predictor.core.wait.base import Progress, WaitEstimator
from predictor.core.wait.history import KnownHistory, requested_procs, size_class
from predictor.core.wait.targets import WaitTargets
from predictor.core.wait.types import WaitContext, WaitPrediction


class ZeroWait(WaitEstimator):
    """Always predicts a wait of 0 seconds."""

    name = "zero"

    def _predict(self, targets: WaitTargets, progress: Progress) -> WaitPrediction:
        n = len(targets)
        return WaitPrediction(wait_s=np.zeros(n), support=np.zeros(n, dtype=int))


class RecentMedian(WaitEstimator):
    """Median wait of the last ``window`` known jobs of the target's size class.

    Falls back to the last ``window`` known jobs of any size when the class has none yet,
    and to 0 s when nothing is known (``predictor`` says which answered).
    """

    name = "median"

    def __init__(self, window: int = 100) -> None:
        self.window = window

    def _learn(self, history: WaitContext) -> None:
        if self.window < 1:
            raise ValueError(f"window must be >= 1, got {self.window}")
        self.known_ = KnownHistory.from_jobs(history.jobs)
        order = self.known_.order
        self.class_ = size_class(requested_procs(history.jobs))[order]
        self.waits_ = history.jobs["wait_time"].to_numpy(dtype=float)[order]
        self.positions_ = [np.flatnonzero(self.class_ == c) for c in range(4)]

    def _predict(self, targets: WaitTargets, progress: Progress) -> WaitPrediction:
        prefix = self.known_.prefix(targets.known_at_s, targets.n_before)
        cls = size_class(targets.requests.procs)
        n = len(targets)
        out, support = np.zeros(n), np.zeros(n, dtype=int)
        label = np.full(n, "no_history", dtype=object)
        for k in range(n):
            mine = self.positions_[cls[k]]
            count = int(np.searchsorted(mine, prefix[k]))
            if count:
                pool, label[k] = (
                    self.waits_[mine[max(0, count - self.window) : count]],
                    "class_median",
                )
            else:
                pool, label[k] = (
                    self.waits_[max(0, prefix[k] - self.window) : prefix[k]],
                    "all_median",
                )
            if pool.size:
                out[k], support[k] = float(np.median(pool)), pool.size
            else:
                label[k] = "no_history"
            if progress is not None and k % 2000 == 0:
                progress(k / n)
        return WaitPrediction(wait_s=out, predictor=label, support=support)
