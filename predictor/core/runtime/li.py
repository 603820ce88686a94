"""Li, Groep and Wolters' instance-based runtime prediction (docs/runtime.md, "Baselines").

The ``k`` nearest finished jobs under a heterogeneous distance (HEOM: 0/1 on nominal user,
group, queue, executable; range-normalised difference on log size and log requested time),
inverse-distance weighted mean of their runtimes, capped by the requested time. The history
base of a target at t is the ``window`` most recently ended jobs (ended before t). Targets are
answered in batches of ``batch`` (one candidate matrix per batch, masked per target), and a
target's candidates never depend on the other targets of its batch.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from predictor.core.runtime.base import Progress
from predictor.core.runtime.history import RuntimeContext
from predictor.core.runtime.peers import PointMethod, log_or_nan
from predictor.core.runtime.targets import RuntimeTargets


def numeric_features(size: np.ndarray, req_time_s: np.ndarray) -> np.ndarray:
    """(n, 2): log2 of the size and log of the requested time (NaN when unknown)."""
    return np.column_stack([np.log2(np.maximum(size, 1)), log_or_nan(req_time_s)])


class LiKnnPredictor(PointMethod):
    """k-NN runtime points with the paper's AAE range (module docstring)."""

    name = "li"

    def __init__(self, k: int = 10, window: int = 4000, batch: int = 128) -> None:
        self.k = k
        self.window = window
        self.batch = batch

    def _prepare(self, history: RuntimeContext) -> None:
        cols = ["user_id", "group_id", "queue_id", "executable_id"]
        self.nominal_ = history.jobs[cols].to_numpy(dtype=np.int64)
        self.numeric_ = numeric_features(history.size, history.req_time_s)
        self.order_ = history.levels["all"].order
        self.end_sorted_ = history.known_end_s[self.order_]
        # max and min of each numeric column over the ``window`` jobs ending at each position
        # (NaN skipped): a target's ranges are read at its last candidate, no scan per target
        rolling = pd.DataFrame(self.numeric_[self.order_]).rolling(self.window, min_periods=1)
        self.span_ = (rolling.max() - rolling.min()).to_numpy()

    def _batch(self, nominal: np.ndarray, numeric: np.ndarray, t: np.ndarray) -> np.ndarray:
        pos = np.searchsorted(self.end_sorted_, t, side="left")  # jobs ended before t
        lo = int(max(0, pos.min() - self.window))
        cand = self.order_[lo : int(pos.max())]
        if cand.size == 0:
            return np.full(t.size, np.nan)
        at = np.arange(lo, lo + cand.size)
        usable = (at[None, :] < pos[:, None]) & (at[None, :] >= pos[:, None] - self.window)
        nom = (nominal[:, None, :] != self.nominal_[cand][None, :, :]).sum(axis=2)
        num = self.numeric_[cand]
        span = self.span_[np.maximum(pos - 1, 0)]  # over each target's own base
        span = np.where((pos[:, None] > 0) & np.isfinite(span) & (span > 0), span, 1.0)
        diff = np.abs(numeric[:, None, :] - num[None, :, :]) / span[:, None, :]
        dist = np.sqrt(nom + np.nan_to_num(diff, nan=1.0).clip(0, 1).__pow__(2).sum(axis=2))
        dist = np.where(usable, dist, np.inf)
        k = min(self.k, cand.size)
        near = np.argpartition(dist, k - 1, axis=1)[:, :k]
        d = np.take_along_axis(dist, near, axis=1)
        w = np.where(np.isfinite(d), 1.0 / (d + 0.05), 0.0)
        runs = self.history_.run_s[cand][near]
        with np.errstate(invalid="ignore", divide="ignore"):
            return (w * runs).sum(axis=1) / w.sum(axis=1)

    def points(self, targets: RuntimeTargets, progress: Progress) -> np.ndarray:
        r = targets.requests
        nominal = np.column_stack([r.user, r.group, r.queue, r.executable])
        numeric = numeric_features(r.procs, targets.req_time_s)
        n = len(targets)
        out = np.empty(n)
        for b in range(0, n, self.batch):
            part = slice(b, b + self.batch)
            out[part] = self._batch(nominal[part], numeric[part], targets.t_s[part])
            if progress is not None:
                progress(min(1.0, (b + self.batch) / max(n, 1)))
        req = targets.req_time_s
        out = np.where(np.isnan(out), np.where(req > 0, req, 1.0), out)
        return np.where(req > 0, np.minimum(out, req), out)
