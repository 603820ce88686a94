"""Simple queue-wait baselines a user would try first (spec "Peers to implement").

* :class:`ZeroWait` always answers 0 s (the floor any method must beat on AAE).
* :class:`RecentMedian` answers the median wait of the most recent ``window`` jobs of the
  target's size class (1-4, 5-16, 17-64, 65+ processors) that had started by the submit time.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from predictor.core.wait.history import KnownHistory, requested_procs, size_class
from predictor.core.wait.types import WaitContext, WaitPrediction


class ZeroWait:
    """Always predicts a wait of 0 seconds."""

    name = "zero"

    def fit(self, ctx: WaitContext) -> ZeroWait:
        return self

    def predict(
        self, ctx: WaitContext, targets: np.ndarray, progress: Any = None
    ) -> WaitPrediction:
        n = len(targets)
        return WaitPrediction(wait_s=np.zeros(n), support=np.zeros(n, dtype=int))


class RecentMedian:
    """Median wait of the last ``window`` known jobs of the target's size class.

    Falls back to the last ``window`` known jobs of any size when the class has none yet,
    and to 0 s when nothing is known (``predictor`` says which answered).
    """

    name = "median"

    def __init__(self, window: int = 100) -> None:
        self.window = window

    def fit(self, ctx: WaitContext) -> RecentMedian:
        if self.window < 1:
            raise ValueError(f"window must be >= 1, got {self.window}")
        return self

    def predict(
        self, ctx: WaitContext, targets: np.ndarray, progress: Any = None
    ) -> WaitPrediction:
        targets = np.asarray(targets)
        hist = KnownHistory.from_jobs(ctx.jobs)
        submit = ctx.jobs["submit_time"].to_numpy(dtype=float)
        prefix = hist.prefix(submit[targets], targets)
        cls = size_class(requested_procs(ctx.jobs))
        waits = ctx.jobs["wait_time"].to_numpy(dtype=float)
        recent = [deque(maxlen=self.window) for _ in range(5)]  # 4 size classes + all jobs
        out = np.zeros(len(targets))
        label = np.empty(len(targets), dtype=object)
        support = np.zeros(len(targets), dtype=int)
        added = 0
        for k in np.argsort(prefix, kind="stable"):
            for row in hist.order[added : prefix[k]]:
                recent[cls[row]].append(waits[row])
                recent[4].append(waits[row])
            added = max(added, prefix[k])
            pool = recent[cls[targets[k]]]
            label[k] = "class_median"
            if not pool:
                pool, label[k] = recent[4], "all_median"
            if pool:
                out[k], support[k] = float(np.median(pool)), len(pool)
            else:
                label[k] = "no_history"
            if progress is not None and k % 2000 == 0:
                progress(k / len(targets))
        return WaitPrediction(wait_s=out, predictor=label, support=support)
