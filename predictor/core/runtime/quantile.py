"""A range from quantile regression ("Baselines": a plain learned model to beat).

Range ``[q10, q90]`` and point q50 of gradient boosting with quantile loss on log runtime,
on the request (user, group, queue, log size, log requested time), the user's last runtimes,
the predicted load and the time of day (``feature_set="request"``); ``"user"`` adds the
user's recent record (:mod:`predictor.core.runtime.user_features`), and names of its columns
joined by ``+`` add those columns only. The default stays ``"request"``: ``"carry+same"``
passed a rule on the tuning parts but was not kept (docs/results.md, "Fifth pass
(runtime5)"). Models are trained at row blocks
(:mod:`predictor.core.state.retrain`: the tuning end, then ``n_retrain`` equal blocks of the
rest of the log), each on the ``max_train`` most recently ended jobs before the block's row.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any

import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor

from predictor.core import gbm_trees
from predictor.core.runtime.base import Progress, RuntimeEstimator, single_ranges
from predictor.core.runtime.history import RuntimeContext
from predictor.core.runtime.peers import (
    clip_to_request,
    last_user_runtimes,
    log_or_nan,
    target_levels,
)
from predictor.core.runtime.quantile_boost import QuantileBoost
from predictor.core.runtime.targets import RuntimeTargets
from predictor.core.runtime.types import RuntimePrediction
from predictor.core.runtime.user_features import COLUMNS, UserTimes, user_record
from predictor.core.shared_fits import shared
from predictor.core.state.retrain import all_boundaries, boundaries, boundary
from predictor.core.state.snapshot import Snapshot
from predictor.core.threads import threads

MIN_TRAIN = 20
LOAD_COLUMN = 7  # of :meth:`QuantileGBRange.features`: the predicted load
#: per block row: the three quantile models (None: too few jobs) and how many jobs they learned
Models = dict[int, tuple[list[HistGradientBoostingRegressor] | None, int]]
#: the nine request columns; "carry+same" was tried and not kept (docs/results.md, "Fifth pass")
DEFAULT_FEATURES = "request"


def user_columns(feature_set: str) -> tuple[int, ...]:
    """Indices into :data:`~predictor.core.runtime.user_features.COLUMNS` of the user-record
    columns a ``feature_set`` adds (module docstring)."""
    if feature_set == "request":
        return ()
    names = COLUMNS if feature_set == "user" else tuple(feature_set.split("+"))
    unknown = sorted(set(names) - set(COLUMNS))
    if unknown:
        raise ValueError(
            f"feature_set must be 'request', 'user' or columns of {COLUMNS} joined by '+'; "
            f"unknown: {unknown}"
        )
    return tuple(COLUMNS.index(n) for n in names)


class QuantileGBRange(RuntimeEstimator):
    """Quantile gradient-boosting range (module docstring)."""

    name = "quantile"

    def __init__(
        self,
        quantiles: tuple[float, float, float] = (0.1, 0.5, 0.9),
        n_retrain: int = 10,
        max_train: int = 10000,
        max_iter: int = 60,
        feature_set: str = DEFAULT_FEATURES,
        random_state: int = 0,
    ) -> None:
        self.quantiles = quantiles
        self.feature_set = feature_set
        self.n_retrain = n_retrain
        self.max_train = max_train
        self.max_iter = max_iter
        self.random_state = random_state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """A model pickled before ``feature_set`` existed answers as it did."""
        state.setdefault("feature_set", "request")
        self.__dict__.update(state)

    def features(self, targets: RuntimeTargets) -> np.ndarray:
        last, second = last_user_runtimes(self.history_, targets)
        r = targets.requests
        request = np.column_stack(
            [
                r.user,
                r.group,
                r.queue,
                np.log2(np.maximum(r.procs, 1)),
                log_or_nan(targets.req_time_s),
                log_or_nan(last),
                log_or_nan(np.where(np.isnan(second), last, (last + second) / 2)),
                targets.load,
                (r.submit_s % 86400) / 3600.0,
            ]
        )
        columns = list(user_columns(self.feature_set))
        if not columns:
            return request
        times = self.times_ or UserTimes.of(self.history_)
        return np.column_stack([request, user_record(self.history_, targets, times)[:, columns]])

    def _learn(self, history: RuntimeContext) -> None:
        """Features of every row and the block length; inside a ``shared_fits.fit_scope`` a
        fit with the same parameters on the very same context shares them and the models
        trained at each block (deterministic: the same models)."""
        self.__dict__.pop("_load_splits", None)
        params = tuple(sorted(self.get_params().items()))
        key = ("quantile", params, id(history.jobs), id(history.run_s), history.n_tune)
        self.times_, self.every_, self.features_, self._models = shared(
            key, history, lambda: self._learned(history)
        )

    def _learned(self, history: RuntimeContext) -> tuple[UserTimes | None, int, np.ndarray, Models]:
        self.times_ = UserTimes.of(history) if user_columns(self.feature_set) else None
        n = len(history.run_s)
        every = max(1, math.ceil((n - history.n_tune) / max(self.n_retrain, 1)))
        features = self.features(RuntimeTargets.from_rows(history, np.arange(n)))
        return self.times_, every, features, {}

    def models(self, b: int) -> tuple[list[HistGradientBoostingRegressor] | None, int]:
        """The three quantile models trained at row ``b``'s arrival (None: too few jobs), and
        how many jobs they learned from."""
        if b not in self._models:
            ctx = self.history_
            t = ctx.submit_s[b] if b < ctx.submit_s.size else -np.inf
            ended = np.flatnonzero((ctx.end_s < t) & (ctx.run_s > 0))
            ended = ended[np.argsort(ctx.end_s[ended], kind="stable")][-self.max_train :]
            models = None if ended.size < MIN_TRAIN else self._train(ended)
            self._models[b] = (models, int(ended.size) if models else 0)
        return self._models[b]

    def settled_key(self, snapshot: Snapshot) -> Hashable | None:
        """On a settled history (``RuntimeContext.settled_at``) a request's answer changes
        with the instant only through the load feature, and a tree reads the load only as
        ``load <= threshold``: the key is the retraining block and the number of the models'
        load thresholds below the load (``runtime.settled``). None when not settled, with
        user-record features, or a load of NaN."""
        ctx = self._fitted()
        t = float(snapshot.known_at_s)
        if self.feature_set != "request" or not ctx.settled_at(t):
            return None
        n = snapshot.arrived_rows(ctx.submit_s)
        b = boundary(int(n), t, ctx.submit_s, ctx.n_tune, self.every_)
        load = float(ctx.load_at(t)[0])
        thresholds = self._load_thresholds(b)
        if thresholds is None or np.isnan(load):
            return None
        return ("quantile", b, int(np.searchsorted(thresholds, load, side="left")))

    def _load_thresholds(self, b: int) -> np.ndarray | None:
        """Sorted thresholds of every split on the load column in the models of block ``b``
        (empty without models); None when a model's trees cannot be read."""
        kept = self.__dict__.setdefault("_load_splits", {})  # not a parameter
        if b not in kept:
            models, _ = self.models(b)
            flats = [gbm_trees.flatten(m) for m in models or []]
            if any(f is None for f in flats):
                kept[b] = None
            else:
                cuts = [f.threshold[(f.feature == LOAD_COLUMN) & ~f.leaf] for f in flats if f]
                kept[b] = np.unique(np.concatenate([np.zeros(0), *cuts]))
        return kept[b]

    def train_ahead(self, tuning_part: bool = True) -> QuantileGBRange:
        """The models of every boundary (:func:`all_boundaries`: the tuning part's few blocks
        too, unless ``tuning_part`` is False: :func:`later_boundaries`), trained now instead
        of by the first prediction that needs them (same models)."""
        ctx = self._fitted()
        for b in all_boundaries(ctx.submit_s.size, ctx.n_tune, self.every_, tuning_part):
            self.models(int(b))
        return self

    def _train(self, rows: np.ndarray) -> list[HistGradientBoostingRegressor]:
        y = np.log(self.history_.run_s[rows])
        x = self.features_[rows].copy()
        x[:, np.isnan(x).all(axis=0)] = 0.0  # an all-missing column breaks the binning
        # One thread: OpenMP oversubscription on a shared machine made fits 10x slower.
        # QuantileBoost: scikit-learn's model, its leaf percentiles read in one partition.
        with threads().limit(limits=1):
            return [
                QuantileBoost(
                    loss="quantile",
                    quantile=q,
                    max_iter=self.max_iter,
                    random_state=self.random_state,
                ).fit(x, y)
                for q in self.quantiles
            ]

    def _predict(self, targets: RuntimeTargets, progress: Progress) -> RuntimePrediction:
        ctx = self.history_
        bounds = boundaries(targets.n_before, targets.t_s, ctx.submit_s, ctx.n_tune, self.every_)
        x = self.features(targets)
        out = np.ones((3, len(targets)))
        support = np.zeros(len(targets), dtype=int)
        unique = np.unique(bounds)
        for i, b in enumerate(unique):
            sel = bounds == b
            models, support[sel] = self.models(int(b))
            if models is not None:
                out[:, sel] = np.exp(gbm_trees.predict_all(models, x[sel], limits=1))
            if progress is not None:
                progress((i + 1) / len(unique))
        low, mid, high = np.sort(out, axis=0)
        low, high = clip_to_request(low, high, targets.req_time_s)
        levels = target_levels(ctx, targets)
        return single_ranges(low, high, mid, levels, support)
