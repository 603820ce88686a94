"""Gradient-boosted regression of queue waits on the system state ("Peers": baselines).

Features per job at its submit time: the sixteen summaries of ``StateSweep.summary`` (as
``log1p``), the counts of waiting and running jobs, the mean of each of the six state
distributions (sum / count: requested runtime, processors, time waited or run so far), the
time of day, and the six histograms' bin frequencies. scikit-learn's
``HistGradientBoostingRegressor`` with absolute-error loss (the metric that leads) is
trained only on jobs whose wait was known at training time, and retrained every
``retrain_every`` rows as the evaluation walks forward.
"""

from __future__ import annotations

import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor

from predictor.core import gbm_trees
from predictor.core.state.retrain import all_boundaries, boundaries, row_boundaries
from predictor.core.threads import threads
from predictor.core.wait.base import Progress, WaitEstimator
from predictor.core.wait.history import KnownHistory
from predictor.core.wait.targets import WaitTargets
from predictor.core.wait.types import WaitContext, WaitPrediction

DAY_S = 86400.0


def gbm_features(targets: WaitTargets) -> np.ndarray:
    """(n, f) features: summaries, W/R counts, distribution means, time of day, histograms."""
    summary = np.maximum(np.asarray(targets.summary, dtype=float), 0.0)
    waiting = np.asarray(targets.wait_count, dtype=float)
    running = np.asarray(targets.run_count, dtype=float)
    means_w = summary[:, 10:13] / np.maximum(waiting, 1.0)[:, None]
    means_r = summary[:, 13:16] / np.maximum(running, 1.0)[:, None]
    tod = np.mod(targets.requests.submit_s, DAY_S) / 3600.0
    counts = np.column_stack([waiting, running])
    hist = np.asarray(targets.hist, dtype=np.float32)
    hist = hist.reshape(len(summary), int(np.prod(hist.shape[1:])))
    cols = [np.log1p(summary), np.log1p(counts), np.log1p(means_w), np.log1p(means_r), tod, hist]
    return np.column_stack(cols)


class WaitGBM(WaitEstimator):
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

    def _learn(self, ctx: WaitContext) -> None:
        if self.retrain_every < 1:
            raise ValueError("retrain_every must be >= 1")
        self.n_tune_ = ctx.n_tune
        self.known_ = KnownHistory.from_jobs(ctx.jobs)
        self.submit_ = ctx.jobs["submit_time"].to_numpy(dtype=float)
        self.waits_ = ctx.jobs["wait_time"].to_numpy(dtype=float)
        self.features_ = gbm_features(WaitTargets.from_rows(ctx, np.arange(len(ctx.jobs))))
        self._models: dict[int, HistGradientBoostingRegressor | None] = {}

    def model(self, b: int) -> HistGradientBoostingRegressor | None:
        """The model on the jobs known at row ``b``'s arrival (None when fewer than 20)."""
        if b not in self._models:
            m = (
                int(self.known_.prefix(self.submit_[[b]], np.array([b]))[0])
                if b < self.submit_.size
                else 0
            )
            rows = self.known_.order[max(0, m - self.max_train) : m]
            self._models[b] = None if rows.size < 20 else self._train(rows)
        return self._models[b]

    def row_blocks(self, rows: np.ndarray) -> np.ndarray:
        """The boundary (the model) each log row is answered with: an evaluation's chunks are
        cut between them (``predictor.core.chunks.split_rows``), so that each model is
        trained in one worker process, not in every process whose chunk needs it."""
        self._fitted()
        return row_boundaries(rows, self.n_tune_, self.retrain_every)

    def train_ahead(self, tuning_part: bool = True) -> WaitGBM:
        """The models of every boundary (:func:`all_boundaries`: the tuning part's few blocks
        too, unless ``tuning_part`` is False: :func:`later_boundaries`), trained now instead
        of by the first prediction that needs them (same models)."""
        self._fitted()
        for b in all_boundaries(self.submit_.size, self.n_tune_, self.retrain_every, tuning_part):
            self.model(int(b))
        return self

    def _train(self, rows: np.ndarray) -> HistGradientBoostingRegressor:
        model = HistGradientBoostingRegressor(
            loss="absolute_error",
            max_iter=self.max_iter,
            learning_rate=self.learning_rate,
            random_state=self.random_state,
        )
        with threads().limit(limits=self.n_threads, user_api="openmp"):
            return model.fit(self.features_[rows], self.waits_[rows])

    def _predict(self, targets: WaitTargets, progress: Progress) -> WaitPrediction:
        feats = gbm_features(targets)
        bounds = boundaries(
            targets.n_before, targets.known_at_s, self.submit_, self.n_tune_, self.retrain_every
        )
        out = np.zeros(len(targets))
        unique = np.unique(bounds)
        for n, b in enumerate(unique):
            sel = bounds == b
            model = self.model(int(b))
            if model is not None:
                pred = gbm_trees.predict(
                    model, feats[sel], limits=self.n_threads, user_api="openmp"
                )
                out[sel] = np.maximum(pred, 0.0)
            if progress is not None:
                progress(n / len(unique))
        return WaitPrediction(wait_s=out)
