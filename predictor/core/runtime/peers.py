"""The simple peers of the rangeSet method (docs/runtime.md, "Baselines") and their helpers.

Every peer follows :mod:`predictor.core.runtime.types`: configured in ``__init__``,
``fit(history)`` learns from the tuning part or the past only, ``predict`` answers one range
per target. Point-only methods (Tsafrir, requested time, Li, Smith) get the paper's range
("End-to-End Predictions-Based Resource Management Framework for Supercomputer Jobs", section
on runtime prediction, its comparison protocol): width = the method's average absolute error
(AAE) on the history of the target's level (tuple, else user, else size), centred on the point.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import pandas as pd

from predictor.core.runtime.base import LEVEL_NAMES, Progress, RuntimeEstimator, single_ranges
from predictor.core.runtime.history import RuntimeContext, slice_sums
from predictor.core.runtime.targets import RuntimeTargets
from predictor.core.runtime.types import RuntimePrediction


def target_levels(ctx: RuntimeContext, targets: RuntimeTargets) -> np.ndarray:
    """Index into ``LEVEL_NAMES`` of each target's history level (the rangeSet's fallback)."""
    return ctx.choose_level(targets.codes, targets.t_s)


def _level_histories(
    ctx: RuntimeContext, targets: RuntimeTargets, levels: np.ndarray
) -> Iterator[tuple[np.ndarray, str, np.ndarray, np.ndarray]]:
    """Per history level: the targets answered there, its name, and each one's bounds.

    ``[lo, hi)`` are positions in ``ctx.levels[name].order`` of the jobs of the target's group
    that ended before its time.
    """
    for i, name in enumerate(LEVEL_NAMES):
        sel = levels == i
        if sel.any():
            lo, hi = ctx.levels[name].bounds(targets.codes[name][sel], targets.t_s[sel])
            yield sel, name, lo, hi


def level_mean(
    ctx: RuntimeContext,
    targets: RuntimeTargets,
    levels: np.ndarray,
    sums_at: Callable[[str], np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """Mean of a per-job value over each target's level history; ``sums_at(level)`` gives the
    value's prefix sums in that level's order (``GroupIndex.prefix_sums``).

    Returns ``(mean, count)``; mean is NaN where the history is empty.
    """
    mean = np.full(len(targets), np.nan)
    count = np.zeros(len(targets), dtype=int)
    for sel, level, lo, hi in _level_histories(ctx, targets, levels):
        sums = sums_at(level)
        n = hi - lo
        with np.errstate(invalid="ignore", divide="ignore"):
            mean[sel] = np.where(n > 0, slice_sums(sums, lo, hi) / np.maximum(n, 1), np.nan)
        count[sel] = n
    return mean, count


def run_sums(ctx: RuntimeContext) -> Callable[[str], np.ndarray]:
    """Prefix sums of the runtimes per level (cached on the context)."""
    return lambda level: ctx.level_sums(level, "run", ctx.run_s)


def clip_to_request(
    low: np.ndarray, high: np.ndarray, requested_s: np.ndarray, min_s: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """Clip ranges to ``[min_s, requested]`` (no upper clip where the request is unknown)."""
    upper = np.where(requested_s > 0, np.maximum(requested_s, min_s), np.inf)
    return np.clip(low, min_s, upper), np.clip(high, min_s, upper)


class PointMethod(RuntimeEstimator):
    """A point predictor given the paper's AAE range (module docstring).

    ``fit`` computes the method's point for every job of the log at its own arrival, so the
    errors of history jobs are those the method really made (no leakage): ``errors_``.
    """

    min_s = 1.0

    def _learn(self, history: RuntimeContext) -> None:
        self._prepare(history)
        every = RuntimeTargets.from_rows(history, np.arange(len(history.run_s)))
        points = self.points(every, None)
        self.errors_ = np.abs(np.nan_to_num(points, nan=0.0) - history.run_s)
        self.error_sums_ = {
            level: index.prefix_sums(self.errors_) for level, index in history.levels.items()
        }

    def _prepare(self, history: RuntimeContext) -> None:
        """Anything ``points`` needs, learned before the points of the whole log."""

    def points(self, targets: RuntimeTargets, progress: Progress) -> np.ndarray:
        raise NotImplementedError

    def _predict(self, targets: RuntimeTargets, progress: Progress) -> RuntimePrediction:
        ctx = self.history_
        point = self.points(targets, progress)
        levels = target_levels(ctx, targets)
        aae, count = level_mean(ctx, targets, levels, self.error_sums_.__getitem__)
        aae = np.nan_to_num(aae, nan=0.0)
        low, high = clip_to_request(
            point - aae / 2, point + aae / 2, targets.req_time_s, self.min_s
        )
        return single_ranges(low, high, point, levels, count)


class BaselineRange(RuntimeEstimator):
    """Seed baseline: ``[min, max]`` of the level history's runtimes; point = their mean."""

    name = "baseline"

    def _learn(self, history: RuntimeContext) -> None:
        self.cummin_: dict[str, np.ndarray] = {}
        self.cummax_: dict[str, np.ndarray] = {}
        for level, index in history.levels.items():
            run = pd.Series(history.run_s[index.order])
            grp = index.codes[index.order]
            self.cummin_[level] = run.groupby(grp).cummin().to_numpy()
            self.cummax_[level] = run.groupby(grp).cummax().to_numpy()

    def _predict(self, targets: RuntimeTargets, progress: Progress) -> RuntimePrediction:
        ctx = self.history_
        levels = target_levels(ctx, targets)
        low = np.full(len(targets), np.nan)
        high = np.full(len(targets), np.nan)
        for sel, level, lo, hi in _level_histories(ctx, targets, levels):
            last = np.maximum(hi - 1, 0)
            cmin, cmax = self.cummin_[level], self.cummax_[level]
            low[sel] = np.where(hi > lo, cmin[np.minimum(last, cmin.size - 1)], np.nan)
            high[sel] = np.where(hi > lo, cmax[np.minimum(last, cmax.size - 1)], np.nan)
        mean, count = level_mean(ctx, targets, levels, run_sums(ctx))
        req = targets.req_time_s
        fallback = np.where(req > 0, req, 1.0)
        low = np.where(np.isnan(low), 1.0, low)
        high = np.where(np.isnan(high), fallback, high)
        return single_ranges(low, high, np.where(np.isnan(mean), fallback, mean), levels, count)


def last_user_runtimes(
    ctx: RuntimeContext, targets: RuntimeTargets
) -> tuple[np.ndarray, np.ndarray]:
    """The user's last and second-last runtimes that ended before each target's time (NaN)."""
    index = ctx.levels["user"]
    lo, hi = index.bounds(targets.codes["user"], targets.t_s)
    if index.order.size == 0:
        return np.full(len(targets), np.nan), np.full(len(targets), np.nan)
    # Only the two rows read are gathered (the whole history re-ordered per call cost
    # 0.5 ms a request on HPC2N's 200k jobs, growing with the log).
    run_of = ctx.run_s[index.order[np.maximum(np.stack([hi - 1, hi - 2]), 0)]]
    last = np.where(hi - lo >= 1, run_of[0], np.nan)
    second = np.where(hi - lo >= 2, run_of[1], np.nan)
    return last, second


def global_past_mean(ctx: RuntimeContext, targets: RuntimeTargets) -> np.ndarray:
    """Mean runtime of all jobs ended before each target's time (1 s when none)."""
    everyone = np.full(len(targets), LEVEL_NAMES.index("all"))
    mean, _ = level_mean(ctx, targets, everyone, run_sums(ctx))
    return np.nan_to_num(mean, nan=1.0)


def requested_or_mean(ctx: RuntimeContext, targets: RuntimeTargets) -> np.ndarray:
    """The requested time, or the past mean runtime where the request has none."""
    req = targets.req_time_s
    return np.where(req > 0, req, global_past_mean(ctx, targets))


class TsafrirPredictor(PointMethod):
    """Tsafrir, Etsion, Feitelson: mean of the user's last two runtimes, capped by the
    requested time; the requested time when the user has no finished job."""

    name = "tsafrir"

    def points(self, targets: RuntimeTargets, progress: Progress) -> np.ndarray:
        ctx = self.history_
        last, second = last_user_runtimes(ctx, targets)
        mean = np.where(np.isnan(second), last, (last + second) / 2.0)
        req = targets.req_time_s
        mean = np.where(np.isnan(mean), requested_or_mean(ctx, targets), mean)
        return np.where(req > 0, np.minimum(mean, req), mean)


class RequestedTime(PointMethod):
    """The user's requested time (the past mean where the log has none)."""

    name = "requested"

    def points(self, targets: RuntimeTargets, progress: Progress) -> np.ndarray:
        return requested_or_mean(self.history_, targets)


def log_or_nan(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > 0, np.log(np.maximum(x, 1e-9)), np.nan)


__all__ = [
    "BaselineRange",
    "PointMethod",
    "RequestedTime",
    "TsafrirPredictor",
    "clip_to_request",
    "global_past_mean",
    "last_user_runtimes",
    "level_mean",
    "log_or_nan",
    "target_levels",
]
