"""Calibrated wait intervals from a method's own recent errors.

A point wait is the wrong product for heavy-tailed waits; a user can act on a range that holds
at its stated confidence. Every wait method gets one the same way: split-conformal prediction
(Vovk, Gammerman & Shafer 2005; Lei et al. 2018) over the method's recent errors on the same
site, made online and adaptive (Gibbs & Candes 2021, "Adaptive conformal inference under
distribution shift"). Seed 002 ("End-to-End Predictions-Based Resource Management Framework for
Supercomputer Jobs", section on queue-wait prediction) gives point answers only; this is ours.

Score. For a past job with prediction ``p`` and actual wait ``y`` (seconds) the score is the
signed difference ``e = y - p`` (``score="diff"``, the default) or the ratio
``e = (1 + y) / (1 + p)`` (``score="ratio"``, a multiplicative error; measured on the tuning
parts it gives 1.5-10x wider intervals, because a job predicted at 0 s that waited a day
lends its huge ratio to every later long prediction: docs/results.md). A pool of scores
``e_(1) <= ... <= e_(n)`` gives the interval at confidence ``c`` for a new prediction ``p`` as
the *shortest* run of ``k = ceil(c (n + 1))`` consecutive sorted scores ``[e_(a), e_(a+k-1)]``,
mapped back: ``[(1 + p) e_(a) - 1, (1 + p) e_(a+k-1) - 1]`` (ratio) or ``[p + e_(a), p +
e_(a+k-1)]`` (diff), clipped below at 0. Both maps are increasing and affine in ``e`` with a
factor common to every run, so the shortest run of scores is the narrowest interval in seconds
(before the clip at 0).

Online rule (no leakage). For a target arriving at ``t`` the pool holds only the scores of
earlier jobs whose wait was known at ``t`` (``start_j < t``, or ``start_j == t`` and ``j``
earlier), the most recent ``window`` of them by start time; optionally per group (size class,
or class of the predicted wait) when the group has at least ``min_pool`` such scores, else all
groups together (measured on the tuning parts, groups made coverage worse, so the default is
one pool: docs/results.md). Adaptive conformal inference
then corrects the level from the misses seen so far: ``alpha_i = (1 - c) + gamma sum_j
((1 - c) - miss_j)`` over the known jobs ``j`` of the target's group, so long-run coverage
converges to ``c`` even when the site drifts. A target with fewer than ``min_pool`` known
scores gets ``[0, inf)`` (counted, reported as uncalibrated).

``P(start within T)`` was read off the same pool until stop 58 (the share whose mapped-back
value is at most ``T``). It understated, so it has its own rule now:
:mod:`predictor.core.wait.p_within`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from predictor.core.wait.sorted_window import SortedWindow

SCORES = ("ratio", "diff")
MIN_LEVEL, MAX_LEVEL = 0.5, 0.99  # confidences the API accepts


def check_level(level: float) -> float:
    """A confidence in [0.5, 0.99], else ``ValueError`` naming the range."""
    level = float(level)
    if not MIN_LEVEL <= level <= MAX_LEVEL:
        raise ValueError(f"confidence must lie in [{MIN_LEVEL}, {MAX_LEVEL}], got {level}")
    return level


def scores(pred_s: np.ndarray, wait_s: np.ndarray, score: str = "diff") -> np.ndarray:
    """Conformity scores ``(1 + y) / (1 + p)`` (ratio) or ``y - p`` (diff), aligned."""
    p = np.maximum(np.asarray(pred_s, dtype=float), 0.0)
    y = np.asarray(wait_s, dtype=float)
    if score == "ratio":
        return (1.0 + y) / (1.0 + p)
    if score == "diff":
        return y - p
    raise ValueError(f"score must be one of {SCORES}, got {score!r}")


def _back(pred_s: ArrayLike, e: ArrayLike, score: str) -> Any:
    return _map_back(np.maximum(np.asarray(pred_s, dtype=float), 0.0), e, score)


def _map_back(p: Any, e: Any, score: str) -> Any:
    """A score ``e`` back to seconds for a prediction ``p`` already clipped at 0 (arrays, or
    Python floats in the per-target loop)."""
    return (1.0 + p) * e - 1.0 if score == "ratio" else p + e


def shortest_run(sorted_scores: np.ndarray, level: float) -> tuple[float, float]:
    """Bounds ``(e_(a), e_(a+k-1))`` of the shortest run of ``k = ceil(level (n+1))`` scores.

    ``level >= n / (n + 1)`` takes every score (the adaptive level may ask for more: the
    pool's whole range is the widest answer it can give); ``level <= 0`` gives an empty run
    (a point at the median). ``sorted_scores`` must be ascending and non-empty.
    """
    n = sorted_scores.size
    k = int(np.ceil(level * (n + 1)))
    if k >= n:
        return float(sorted_scores[0]), float(sorted_scores[-1])
    if k <= 1:
        mid = float(sorted_scores[n // 2])
        return mid, mid
    widths = sorted_scores[k - 1 :] - sorted_scores[: n - k + 1]
    a = int(np.argmin(widths))
    return float(sorted_scores[a]), float(sorted_scores[a + k - 1])


def interval_from_pool(
    pred_s: np.ndarray, pool_scores: np.ndarray, level: float, score: str = "diff"
) -> tuple[np.ndarray, np.ndarray]:
    """Split-conformal ``(low_s, high_s)`` for predictions ``pred_s`` from one score pool.

    The API's form: the pool is the method's recent errors on the site (see module docstring).
    """
    pool = np.sort(np.asarray(pool_scores, dtype=float))
    if pool.size == 0:
        raise ValueError("no known errors to calibrate from (empty score pool)")
    return interval_from_sorted(pred_s, pool, check_level(level), score)


def interval_from_sorted(
    pred_s: np.ndarray, sorted_scores: np.ndarray, level: float, score: str = "diff"
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`interval_from_pool` from scores already sorted, at any ``level`` in [0, 1] (the
    adaptive level may leave the API's range)."""
    lo_e, hi_e = shortest_run(sorted_scores, level)
    lo = np.maximum(_back(pred_s, np.full(np.shape(pred_s), lo_e), score), 0.0)
    hi = np.maximum(_back(pred_s, np.full(np.shape(pred_s), hi_e), score), lo)
    return lo, hi


@dataclass
class OnlineIntervals:
    """Intervals of every target at each level, and how they were made.

    low_s, high_s : level -> (n,) bounds in seconds (``high_s`` may be inf: uncalibrated).
    pool_size : (n,) scores behind each target's interval (0: uncalibrated).
    """

    low_s: dict[float, np.ndarray]
    high_s: dict[float, np.ndarray]
    pool_size: np.ndarray

    def summary(self, wait_s: np.ndarray) -> dict[str, dict[str, float | int | None]]:
        """``{"0.8": {"coverage", "mean_width_s", "uncalibrated"}, ...}`` over the targets.

        Coverage counts every target (an uncalibrated ``[0, inf)`` holds by construction); the
        mean width is over the calibrated ones (None when there are none: JSON has no NaN).
        """
        y = np.asarray(wait_s, dtype=float)
        cal = self.pool_size > 0
        out: dict[str, dict[str, float | int | None]] = {}
        for level, lo in self.low_s.items():
            hi = self.high_s[level]
            hit = (y >= lo) & (y <= hi)
            out[f"{level:g}"] = {
                "coverage": float(hit.mean()) if y.size else None,
                "mean_width_s": float((hi - lo)[cal].mean()) if cal.any() else None,
                "uncalibrated": int((~cal).sum()),
            }
        return out


def known_order(arrival_s: np.ndarray, known_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows by (known time, row) and, per target, how many of them were known at its arrival.

    Row ``j`` is known at target ``i`` iff ``known_j < arrival_i`` or (equal and ``j < i``);
    rows must be in arrival order.
    """
    arrival = np.asarray(arrival_s, dtype=float)
    known = np.asarray(known_s, dtype=float)
    if np.any(np.diff(arrival) < 0):
        raise ValueError("rows must be sorted by arrival time")
    rows = np.arange(arrival.size)
    order = np.lexsort((rows, known))
    k_sorted = known[order]
    lo = np.searchsorted(k_sorted, arrival, side="left")
    hi = np.searchsorted(k_sorted, arrival, side="right")
    count = lo.copy()
    for i in np.flatnonzero(hi > lo):  # same-second ties: only earlier rows count
        count[i] = lo[i] + int(np.sum(order[lo[i] : hi[i]] < i))
    return order, count


def online_intervals(
    pred_s: np.ndarray,
    wait_s: np.ndarray,
    arrival_s: np.ndarray,
    known_s: np.ndarray,
    levels: tuple[float, ...] = (0.8, 0.9),
    *,
    groups: np.ndarray | None = None,
    score: str = "diff",
    window: int = 1000,
    min_pool: int = 30,
    gamma: float = 0.002,
) -> OnlineIntervals:
    """Online adaptive split-conformal intervals for rows in arrival order (module docstring).

    Parameters
    ----------
    pred_s, wait_s : (n,) a method's predictions and the actual waits, seconds. ``wait_s[j]``
        is read only once row ``j`` is known to a later arrival (the leakage rule).
    arrival_s : (n,) when each prediction is made (submit time), non-decreasing.
    known_s : (n,) when each wait becomes known (start time, ``arrival + wait``).
    groups : (n,) int group per row (size class), or None for one pool. A group's own pool
        answers once it holds ``min_pool`` scores; until then the all-groups pool does.
    window : most recent known scores kept per pool.
    gamma : adaptive step; 0 gives plain split conformal.
    """
    pred = np.asarray(pred_s, dtype=float)
    y = np.asarray(wait_s, dtype=float)
    n = pred.size
    grp = np.zeros(n, dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)
    e = scores(pred, y, score)
    order, count = known_order(arrival_s, known_s)
    levels = tuple(check_level(c) for c in levels)
    pools: dict[int, SortedWindow] = {-1: SortedWindow(window)}
    # level -> group -> current miss-rate target
    alpha: dict[float, dict[int, float]] = {c: {} for c in levels}
    low = {c: np.zeros(n) for c in levels}
    high = {c: np.full(n, np.inf) for c in levels}
    miss = {c: np.zeros(n, dtype=bool) for c in levels}
    pool_size = np.zeros(n, dtype=np.int64)
    added = 0
    for i in range(n):
        for j in order[added : count[i]]:  # newly known rows: their scores and their misses
            pools.setdefault(int(grp[j]), SortedWindow(window)).append(e[j])
            pools[-1].append(e[j])
            for c in levels:
                key = _pool_key(pools, int(grp[j]), min_pool)
                a = alpha[c].get(key, 1.0 - c)
                alpha[c][key] = a + gamma * ((1.0 - c) - float(miss[c][j]))
        added = max(added, int(count[i]))
        key = _pool_key(pools, int(grp[i]), min_pool)
        pool = pools.get(key, pools[-1])
        if len(pool) < min_pool:
            for c in levels:
                miss[c][i] = False  # [0, inf) holds
            continue
        ordered = pool.sorted()
        pool_size[i] = ordered.size
        p_i, y_i = max(float(pred[i]), 0.0), float(y[i])  # _back's clip, on a Python float
        for c in levels:
            target = 1.0 - alpha[c].get(key, 1.0 - c)
            lo_e, hi_e = shortest_run(ordered, min(max(target, 0.0), 1.0))
            lo = max(_map_back(p_i, lo_e, score), 0.0)
            hi = max(_map_back(p_i, hi_e, score), lo)
            low[c][i], high[c][i] = lo, hi
            miss[c][i] = not (lo <= y_i <= hi)
    return OnlineIntervals(low_s=low, high_s=high, pool_size=pool_size)


def _pool_key(pools: dict[int, SortedWindow], group: int, min_pool: int) -> int:
    own = pools.get(group)
    return group if own is not None and len(own) >= min_pool else -1
