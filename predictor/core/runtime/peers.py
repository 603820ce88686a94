"""The peers of the rangeSet method, answering for the same target jobs (spec "Baselines").

Every peer follows the same shape: configured in ``__init__``, ``fit(ctx)`` learns from the
tuning part or the past only, ``predict(ctx, rows)`` returns a :class:`RangePrediction`
(one range and one point per row). Point-only methods (Tsafrir, requested time, Li, Smith)
get the seed's range: width = the method's average absolute error (AAE) on the history of the
target's level (tuple, else user, else size), centred on the point.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingRegressor
from threadpoolctl import threadpool_limits

from predictor.core.runtime.history import RuntimeContext

LEVEL_NAMES = ("tuple", "user", "size", "all")


@dataclass(frozen=True)
class RangePrediction:
    """One range ``[low_s, high_s]`` and one point per target row (seconds)."""

    low_s: np.ndarray
    high_s: np.ndarray
    point_s: np.ndarray


def target_levels(ctx: RuntimeContext, rows: np.ndarray) -> np.ndarray:
    """Index into ``LEVEL_NAMES`` of each row's history level (the rangeSet's fallback)."""
    return ctx.choose_level(ctx.level_codes(rows), ctx.submit_s[rows])


def _level_histories(
    ctx: RuntimeContext, rows: np.ndarray, levels: np.ndarray
) -> Iterator[tuple[np.ndarray, Any, np.ndarray, np.ndarray]]:
    """Per history level: the rows answered there, its index, and each row's history bounds.

    ``[lo, hi)`` are positions in ``index.order`` of the jobs of the row's group that ended
    before the row's submit time.
    """
    t = ctx.submit_s[rows]
    for i, name in enumerate(LEVEL_NAMES):
        sel = levels == i
        if sel.any():
            index = ctx.levels[name]
            lo, hi = index.bounds(index.codes[rows[sel]], t[sel])
            yield sel, index, lo, hi


def level_mean(
    ctx: RuntimeContext, rows: np.ndarray, values: np.ndarray, levels: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Mean of ``values`` over each row's level history (jobs ended before its submit).

    Returns ``(mean, count)``; mean is NaN where the history is empty.
    """
    mean = np.full(rows.size, np.nan)
    count = np.zeros(rows.size, dtype=int)
    for sel, index, lo, hi in _level_histories(ctx, rows, levels):
        sums = index.prefix_sums(values)
        n = hi - lo
        with np.errstate(invalid="ignore", divide="ignore"):
            mean[sel] = np.where(n > 0, (sums[hi] - sums[lo]) / np.maximum(n, 1), np.nan)
        count[sel] = n
    return mean, count


def clip_to_request(
    low: np.ndarray, high: np.ndarray, requested_s: np.ndarray, min_s: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """Clip ranges to ``[min_s, requested]`` (no upper clip where the request is unknown)."""
    upper = np.where(requested_s > 0, np.maximum(requested_s, min_s), np.inf)
    return np.clip(low, min_s, upper), np.clip(high, min_s, upper)


def aae_range(
    ctx: RuntimeContext, rows: np.ndarray, all_points: np.ndarray, min_s: float = 1.0
) -> RangePrediction:
    """Seed protocol for point methods: width = AAE of the method's points on the level's
    history, centred on the point; clipped to ``[min_s, requested]``.

    ``all_points`` (n_jobs,) holds the method's prediction for every job at its own submit
    time, so the errors of history jobs are those the method really made (no leakage).
    """
    errors = np.abs(np.nan_to_num(all_points, nan=0.0) - ctx.run_s)
    aae, _ = level_mean(ctx, rows, errors, target_levels(ctx, rows))
    aae = np.nan_to_num(aae, nan=0.0)
    point = all_points[rows]
    low, high = clip_to_request(point - aae / 2, point + aae / 2, ctx.req_time_s[rows], min_s)
    return RangePrediction(low, high, point)


def past_min_max(
    ctx: RuntimeContext, rows: np.ndarray, levels: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Min and max runtime of each row's level history (NaN when empty)."""
    low = np.full(rows.size, np.nan)
    high = np.full(rows.size, np.nan)
    for sel, index, lo, hi in _level_histories(ctx, rows, levels):
        run = pd.Series(ctx.run_s[index.order])
        grp = index.codes[index.order]
        cmin = run.groupby(grp).cummin().to_numpy()
        cmax = run.groupby(grp).cummax().to_numpy()
        last = np.maximum(hi - 1, 0)
        low[sel] = np.where(hi > lo, cmin[last], np.nan)
        high[sel] = np.where(hi > lo, cmax[last], np.nan)
    return low, high


class BaselineRange:
    """Seed baseline: ``[min, max]`` of the level history's runtimes; point = their mean."""

    def fit(self, ctx: RuntimeContext) -> BaselineRange:
        return self

    def predict(self, ctx: RuntimeContext, rows: np.ndarray) -> RangePrediction:
        levels = target_levels(ctx, rows)
        low, high = past_min_max(ctx, rows, levels)
        mean, _ = level_mean(ctx, rows, ctx.run_s, levels)
        req = ctx.req_time_s[rows]
        fallback = np.where(req > 0, req, 1.0)
        low = np.where(np.isnan(low), 1.0, low)
        high = np.where(np.isnan(high), fallback, high)
        return RangePrediction(low, high, np.where(np.isnan(mean), fallback, mean))


def last_user_runtimes(ctx: RuntimeContext, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The user's last and second-last runtimes that ended before each row's submit (NaN)."""
    index = ctx.levels["user"]
    lo, hi = index.bounds(index.codes[rows], ctx.submit_s[rows])
    run_sorted = ctx.run_s[index.order]
    last = np.where(hi - lo >= 1, run_sorted[np.maximum(hi - 1, 0)], np.nan)
    second = np.where(hi - lo >= 2, run_sorted[np.maximum(hi - 2, 0)], np.nan)
    return last, second


def global_past_mean(ctx: RuntimeContext, rows: np.ndarray) -> np.ndarray:
    """Mean runtime of all jobs ended before each row's submit (1 s when none)."""
    mean, _ = level_mean(ctx, rows, ctx.run_s, np.full(rows.size, 3))
    return np.nan_to_num(mean, nan=1.0)


class TsafrirPredictor:
    """Tsafrir, Etsion, Feitelson: mean of the user's last two runtimes, capped by the
    requested time; the requested time when the user has no finished job."""

    def fit(self, ctx: RuntimeContext) -> TsafrirPredictor:
        return self

    def points(self, ctx: RuntimeContext, rows: np.ndarray) -> np.ndarray:
        last, second = last_user_runtimes(ctx, rows)
        mean = np.where(np.isnan(second), last, (last + second) / 2.0)
        req = ctx.req_time_s[rows]
        fallback = np.where(req > 0, req, global_past_mean(ctx, rows))
        mean = np.where(np.isnan(mean), fallback, mean)
        return np.where(req > 0, np.minimum(mean, req), mean)

    def predict(self, ctx: RuntimeContext, rows: np.ndarray) -> RangePrediction:
        return aae_range(ctx, rows, self.points(ctx, np.arange(len(ctx.run_s))))


class RequestedTime:
    """The user's requested time (the past mean where the log has none)."""

    def fit(self, ctx: RuntimeContext) -> RequestedTime:
        return self

    def points(self, ctx: RuntimeContext, rows: np.ndarray) -> np.ndarray:
        req = ctx.req_time_s[rows]
        return np.where(req > 0, req, global_past_mean(ctx, rows))

    def predict(self, ctx: RuntimeContext, rows: np.ndarray) -> RangePrediction:
        return aae_range(ctx, rows, self.points(ctx, np.arange(len(ctx.run_s))))


def _log(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > 0, np.log(np.maximum(x, 1e-9)), np.nan)


class LiKnnPredictor:
    """Li, Groep, Wolters' instance-based runtime prediction: k nearest finished jobs under a
    heterogeneous distance (HEOM: 0/1 on nominal user, group, queue, executable; range-
    normalised difference on log size and log requested time), inverse-distance weighted mean
    of their runtimes. The history base is the ``window`` most recently ended jobs.

    Rows are answered in batches of ``batch`` (candidates masked per row by ``end < t``).
    """

    def __init__(self, k: int = 10, window: int = 4000, batch: int = 128) -> None:
        self.k = k
        self.window = window
        self.batch = batch

    def fit(self, ctx: RuntimeContext) -> LiKnnPredictor:
        cols = ["user_id", "group_id", "queue_id", "executable_id"]
        self.nominal_ = ctx.jobs[cols].to_numpy(dtype=np.int64)
        self.numeric_ = np.column_stack([np.log2(np.maximum(ctx.size, 1)), _log(ctx.req_time_s)])
        return self

    def _batch(
        self, ctx: RuntimeContext, rows: np.ndarray, order: np.ndarray, end_sorted: np.ndarray
    ) -> np.ndarray:
        t = ctx.submit_s[rows]
        pos = int(np.searchsorted(end_sorted, t.max(), side="left"))
        cand = order[max(0, pos - self.window - rows.size) : pos]
        if cand.size == 0:
            return np.full(rows.size, np.nan)
        nom = (self.nominal_[rows][:, None, :] != self.nominal_[cand][None, :, :]).sum(axis=2)
        num = self.numeric_[cand]
        with warnings.catch_warnings():  # an all-missing column (no requested times) is fine
            warnings.simplefilter("ignore", RuntimeWarning)
            span = np.nanmax(num, axis=0) - np.nanmin(num, axis=0)
        span = np.where(np.isfinite(span) & (span > 0), span, 1.0)
        diff = np.abs(self.numeric_[rows][:, None, :] - num[None, :, :]) / span
        dist = np.sqrt(nom + np.nan_to_num(diff, nan=1.0).clip(0, 1).__pow__(2).sum(axis=2))
        dist = np.where(ctx.known_end_s[cand][None, :] < t[:, None], dist, np.inf)
        k = min(self.k, cand.size)
        near = np.argpartition(dist, k - 1, axis=1)[:, :k]
        d = np.take_along_axis(dist, near, axis=1)
        w = np.where(np.isfinite(d), 1.0 / (d + 0.05), 0.0)
        runs = ctx.run_s[cand][near]
        with np.errstate(invalid="ignore", divide="ignore"):
            return (w * runs).sum(axis=1) / w.sum(axis=1)

    def points(self, ctx: RuntimeContext, rows: np.ndarray, progress=None) -> np.ndarray:  # noqa: ANN001
        order = ctx.levels["all"].order
        end_sorted = ctx.known_end_s[order]
        out = np.empty(rows.size)
        for b in range(0, rows.size, self.batch):
            out[b : b + self.batch] = self._batch(ctx, rows[b : b + self.batch], order, end_sorted)
            if progress is not None:
                progress(min(1.0, (b + self.batch) / max(rows.size, 1)))
        req = ctx.req_time_s[rows]
        out = np.where(np.isnan(out), np.where(req > 0, req, 1.0), out)
        return np.where(req > 0, np.minimum(out, req), out)

    def predict(self, ctx: RuntimeContext, rows: np.ndarray, progress=None) -> RangePrediction:  # noqa: ANN001
        upto = np.arange(int(rows.max()) + 1) if rows.size else rows
        all_points = np.full(len(ctx.run_s), np.nan)
        all_points[upto] = self.points(ctx, upto, progress)
        return aae_range(ctx, rows, all_points)


class QuantileGBRange:
    """Range [q10, q90] (point q50) of gradient boosting with quantile loss on log runtime,
    trained only on jobs ended before the retrain time; retrained ``n_retrain`` times over
    the targets (equal chunks), each time on the ``max_train`` most recently ended jobs.
    """

    def __init__(
        self,
        quantiles: tuple[float, float, float] = (0.1, 0.5, 0.9),
        n_retrain: int = 10,
        max_train: int = 10000,
        max_iter: int = 60,
        random_state: int = 0,
    ) -> None:
        self.quantiles = quantiles
        self.n_retrain = n_retrain
        self.max_train = max_train
        self.max_iter = max_iter
        self.random_state = random_state

    def fit(self, ctx: RuntimeContext) -> QuantileGBRange:
        rows = np.arange(len(ctx.run_s))
        last, second = last_user_runtimes(ctx, rows)
        self.features_ = np.column_stack(
            [
                ctx.keys["user_id"],
                ctx.keys["group_id"],
                ctx.keys["queue_id"],
                np.log2(np.maximum(ctx.size, 1)),
                _log(ctx.req_time_s),
                _log(last),
                _log(np.where(np.isnan(second), last, (last + second) / 2)),
                ctx.pred_load,
                (ctx.submit_s % 86400) / 3600.0,
            ]
        )
        return self

    def _models(self, ctx: RuntimeContext, t: float) -> list[HistGradientBoostingRegressor]:
        ended = np.flatnonzero((ctx.end_s < t) & (ctx.run_s > 0))
        ended = ended[np.argsort(ctx.end_s[ended], kind="stable")][-self.max_train :]
        y = np.log(ctx.run_s[ended])
        x = self.features_[ended].copy()
        x[:, np.isnan(x).all(axis=0)] = 0.0  # an all-missing column breaks the binning
        # One thread: OpenMP oversubscription on a shared machine made fits 10x slower.
        with threadpool_limits(limits=1):
            return [
                HistGradientBoostingRegressor(
                    loss="quantile",
                    quantile=q,
                    max_iter=self.max_iter,
                    random_state=self.random_state,
                ).fit(x, y)
                for q in self.quantiles
            ]

    def predict(self, ctx: RuntimeContext, rows: np.ndarray, progress=None) -> RangePrediction:  # noqa: ANN001
        out = np.ones((3, rows.size))
        chunks = [c for c in np.array_split(np.arange(rows.size), self.n_retrain) if c.size]
        for i, chunk in enumerate(chunks):
            t = float(ctx.submit_s[rows[chunk]].min())
            if np.count_nonzero((ctx.end_s < t) & (ctx.run_s > 0)) >= 20:
                x = self.features_[rows[chunk]]
                out[:, chunk] = np.exp([m.predict(x) for m in self._models(ctx, t)])
            if progress is not None:
                progress((i + 1) / len(chunks))
        low, mid, high = np.sort(out, axis=0)
        low, high = clip_to_request(low, high, ctx.req_time_s[rows])
        return RangePrediction(low, high, mid)
