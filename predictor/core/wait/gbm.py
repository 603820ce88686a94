"""Gradient-boosted regression of queue waits on the system state (spec "Peers": baselines).

Features per job at its submit time: the sixteen summaries of ``StateSweep.summary`` (as
``log1p``), the counts of waiting and running jobs, the mean of each of the six state
distributions (sum / count: requested runtime, processors, time waited or run so far), the
time of day, and the six histograms' bin frequencies. scikit-learn's
``HistGradientBoostingRegressor`` with absolute-error loss (the metric that leads) is
trained only on jobs whose wait was known at training time, and retrained every
``retrain_every`` rows as the evaluation walks forward.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor
from threadpoolctl import threadpool_limits

from predictor.core.wait.history import KnownHistory
from predictor.core.wait.types import WaitContext, WaitPrediction

DAY_S = 86400.0


def queue_counts(jobs: Any) -> tuple[np.ndarray, np.ndarray]:
    """Jobs waiting and running just before each row's submission (all queues).

    ``waiting_i = (rows submitted before i) - (started by submit_i)``, ``running_i = (started by
    submit_i) - (ended by submit_i)``, counted over rows with a known wait.
    """
    submit = jobs["submit_time"].to_numpy(dtype=float)
    wait = jobs["wait_time"].to_numpy(dtype=float)
    run = np.maximum(jobs["run_time"].to_numpy(dtype=float), 0.0)
    known = (wait >= 0) & (submit >= 0)
    start = np.sort(submit[known] + wait[known])
    end = np.sort(submit[known] + wait[known] + run[known])
    before = np.cumsum(known) - known  # known rows strictly before i (sorted by submit)
    started = np.searchsorted(start, submit, side="left")
    ended = np.searchsorted(end, submit, side="left")
    return np.maximum(before - started, 0).astype(float), np.maximum(started - ended, 0).astype(
        float
    )


def gbm_features(ctx: WaitContext) -> np.ndarray:
    """(n, f) features: summaries, counts, distribution means, time of day, histograms.

    Counts are the sweep's per-queue ``wait_count``/``run_count`` when it has them, else
    :func:`queue_counts`; the six histograms' relative frequencies (``state.hist``) are
    appended when present.
    """
    summary = np.maximum(np.asarray(ctx.state.summary, dtype=float), 0.0)
    if hasattr(ctx.state, "wait_count"):
        waiting = np.asarray(ctx.state.wait_count, dtype=float)
        running = np.asarray(ctx.state.run_count, dtype=float)
    else:
        waiting, running = queue_counts(ctx.jobs)
    means_w = summary[:, 10:13] / np.maximum(waiting, 1.0)[:, None]
    means_r = summary[:, 13:16] / np.maximum(running, 1.0)[:, None]
    tod = np.mod(ctx.jobs["submit_time"].to_numpy(dtype=float), DAY_S) / 3600.0
    counts = np.column_stack([waiting, running])
    cols = [np.log1p(summary), np.log1p(counts), np.log1p(means_w), np.log1p(means_r), tod]
    hist = getattr(ctx.state, "hist", None)
    if hist is not None:
        cols.append(np.asarray(hist, dtype=np.float32).reshape(len(summary), -1))
    return np.column_stack(cols)


class WaitGBM:
    """Histogram gradient boosting on the state features, trained on the known past.

    Parameters
    ----------
    retrain_every : rows between retrainings (a target at row ``i`` uses the model trained
        at the last multiple boundary at or before it).
    max_train : at most this many most recently started jobs per training.
    max_iter, learning_rate : passed to ``HistGradientBoostingRegressor``.
    random_state : passed to the regressor.
    n_threads : OpenMP threads while training (None = all). One by default: on a shared
        machine OpenMP oversubscription made training ~9x slower (measured: 90 s vs 10 s for
        30 000 rows x 86 features on 2 busy cores).
    """

    name = "gbm"

    def __init__(
        self,
        retrain_every: int = 5000,
        max_train: int = 30000,
        max_iter: int = 200,
        learning_rate: float = 0.1,
        random_state: int | None = 0,
        n_threads: int | None = 1,
    ) -> None:
        self.retrain_every = retrain_every
        self.max_train = max_train
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.random_state = random_state
        self.n_threads = n_threads

    def _train(self, ctx: WaitContext, feats: np.ndarray, hist: KnownHistory, row: int):
        """A model on the jobs known at ``submit_row`` (None when fewer than 20)."""
        at = ctx.jobs["submit_time"].to_numpy(dtype=float)[row]
        m = int(hist.prefix(np.array([at]), np.array([row]))[0])
        rows = hist.order[max(0, m - self.max_train) : m]
        if rows.size < 20:
            return None
        model = HistGradientBoostingRegressor(
            loss="absolute_error",
            max_iter=self.max_iter,
            learning_rate=self.learning_rate,
            random_state=self.random_state,
        )
        with threadpool_limits(limits=self.n_threads, user_api="openmp"):
            return model.fit(feats[rows], ctx.jobs["wait_time"].to_numpy(dtype=float)[rows])

    def fit(self, ctx: WaitContext) -> WaitGBM:
        """Train on what was known at the end of the tuning part (the first model)."""
        if self.retrain_every < 1:
            raise ValueError("retrain_every must be >= 1")
        self.n_tune_ = ctx.n_tune
        return self

    def predict(
        self, ctx: WaitContext, targets: np.ndarray, progress: Any = None
    ) -> WaitPrediction:
        targets = np.asarray(targets)
        feats = gbm_features(ctx)
        hist = KnownHistory.from_jobs(ctx.jobs)
        # training boundary of each target: the tuning end, then every retrain_every rows
        steps = np.maximum(targets - self.n_tune_, 0) // self.retrain_every
        bounds = np.minimum(self.n_tune_ + steps * self.retrain_every, targets)
        out = np.zeros(len(targets))
        for n, b in enumerate(np.unique(bounds)):
            sel = bounds == b
            model = self._train(ctx, feats, hist, int(b))
            if model is not None:
                with threadpool_limits(limits=self.n_threads, user_api="openmp"):
                    out[sel] = np.maximum(model.predict(feats[targets[sel]]), 0.0)
            if progress is not None:
                progress(n / len(np.unique(bounds)))
        return WaitPrediction(wait_s=out)
