"""A running job's runtime given how long it has already run.

A job seen running at ``e`` seconds has ``R > e``. Taking a running job to end at its start
plus the point predicted at its arrival (and, once past that, at its time limit) made the
queue-based starts late on the demo site (docs/sites.md, "Which start a user is told"); and
the jobs seen running at an instant are the long ones (a random instant falls in a long job
more often than in a short one), so a prediction made for an arriving job is short for them.

The rule (:meth:`LimitFractions.runtime_given_elapsed`): **the owner's finished jobs'
runtimes as fractions of their time limits, ``u = R / L`` (clipped to [0, 1]), conditioned on
``u > e / L``; the estimate is ``L x mean(u | u > e / L)``**, from the user's own jobs when at
least ``MIN_SURVIVORS`` of them ran that far, else from every user's. It is the expected
runtime given the elapsed time under the empirical distribution of ``R / L`` (Tsafrir et al.
2007 use the user's recent runtimes for a job's runtime; here they are read as fractions of
the limit so a job that has run long shifts the estimate to the user's long runs), and it
never passes the limit. Measured on the running jobs of replayed logs (docs/results.md, issue
19, fourth round) it is closer to their ends than the arrival-time point or the rangeSet
conditioned on ``R > e``.

A job without a time limit has no fraction: its runtime rangeSet (``rangeset.RangeSet``,
ranges ``[l_i, u_i]`` with probabilities ``p_i``, mass even inside each) is conditioned on
``R > e`` instead (:func:`runtime_given_elapsed`): ``l'_i = max(l_i, e)``, ``p'_i = p_i
(u_i - l'_i) / (u_i - l_i)`` renormalised, and the same point rule (seed "End-to-End
Predictions-Based Resource Management Framework for Supercomputer Jobs", Section IV-B, the
weighted sum of range midpoints) on them; before any range its own point, past every range
``e``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from predictor.core.runtime.rangeset import RangeSet, weighted_midpoint

MIN_SURVIVORS = 5  # the user's own jobs that ran at least as far, to answer from them


def runtime_given_elapsed(rs: RangeSet, elapsed_s: float, limit_s: float = 0.0) -> float:
    """Expected total runtime (seconds) of a job that has run ``elapsed_s`` and not ended,
    from its rangeSet (the rule for a job without a time limit; module docstring).

    Parameters
    ----------
    rs : the job's runtime rangeSet.
    elapsed_s : how long it has run (>= 0).
    limit_s : its time limit (<= 0: none).

    Returns
    -------
    float >= ``elapsed_s`` (and <= ``limit_s`` when there is one; ``limit_s`` once past it).
    """
    e = max(float(elapsed_s), 0.0)
    limit = float(limit_s) if limit_s and limit_s > 0 else np.inf
    if e >= limit:
        return limit
    low, high, prob = rs.low_s, rs.high_s, rs.probability
    if low.size == 0 or e <= float(low.min()):
        return float(min(max(rs.point_s, e), limit))
    above = (high > e) & (prob > 0)
    if not above.any():
        return float(e + (limit - e) / 2.0) if np.isfinite(limit) else e
    lo, hi, p = low[above], high[above], prob[above]
    cut = np.maximum(lo, e)
    width = hi - lo
    share = np.where(width > 0, (hi - cut) / np.where(width > 0, width, 1.0), 1.0)
    q = p * share
    estimate = weighted_midpoint(cut, hi, q / q.sum())
    return float(min(max(estimate, e), limit))


@dataclass(frozen=True)
class LimitFractions:
    """Finished jobs' ``runtime / time limit`` by user, for :meth:`runtime_given_elapsed`.

    fraction : (n,) sorted by (user, fraction); key : (n,) ``2 x user rank + fraction``
    (increasing); users : (u,) the users, sorted; end : (u,) where each user's block ends;
    cum : (n + 1,) running sums of ``fraction`` (``cum[k]`` the first k); pooled,
    pooled_cum : every user's fractions sorted, and their running sums.
    """

    fraction: np.ndarray
    key: np.ndarray
    users: np.ndarray
    end: np.ndarray
    cum: np.ndarray
    pooled: np.ndarray
    pooled_cum: np.ndarray

    @classmethod
    def from_history(cls, history: pd.DataFrame) -> LimitFractions:
        """From the finished jobs of a history (SWF columns ``user_id``, ``run_time``,
        ``requested_time``) with a runtime and a time limit."""
        return cls.from_arrays(
            history["user_id"].to_numpy(np.int64),
            history["run_time"].to_numpy(float),
            history["requested_time"].to_numpy(float),
        )

    @classmethod
    def from_arrays(cls, user: np.ndarray, run: np.ndarray, limit: np.ndarray) -> LimitFractions:
        """:meth:`from_history` from its three columns (user id, runtime, time limit)."""
        ok = (run >= 0) & (limit > 0)
        user = user[ok]
        frac = np.clip(run[ok] / limit[ok], 0.0, 1.0)
        order = np.lexsort((frac, user))
        user, frac = user[order], frac[order]
        users, rank = np.unique(user, return_inverse=True)
        end = np.searchsorted(user, users, side="right")
        cum = np.concatenate([[0.0], np.cumsum(frac)])
        pooled = np.sort(frac)
        pooled_cum = np.concatenate([[0.0], np.cumsum(pooled)])
        return cls(frac, 2.0 * rank + frac, users, end, cum, pooled, pooled_cum)

    def runtime_given_elapsed(
        self, user: np.ndarray, elapsed_s: np.ndarray, limit_s: np.ndarray
    ) -> np.ndarray:
        """(r,) expected runtime, seconds, of r running jobs with time limits (> 0):
        ``L x mean(u | u > e / L)`` over the user's finished jobs (at least
        ``MIN_SURVIVORS`` of them), else over every user's; ``L`` when none ran that far."""
        limit = np.asarray(limit_s, float)
        x = np.minimum(np.maximum(np.asarray(elapsed_s, float), 0.0) / limit, 1.0)
        below = np.searchsorted(self.pooled, x, side="right")
        left_all = self.pooled.size - below
        sum_all = self.pooled_cum[-1] - self.pooled_cum[below]
        mean = np.where(left_all > 0, sum_all / np.maximum(left_all, 1), 1.0)
        user = np.asarray(user, np.int64)
        if self.users.size == 0:
            return np.minimum(np.maximum(mean * limit, np.asarray(elapsed_s, float)), limit)
        at = np.searchsorted(self.users, user)
        known = (at < self.users.size) & (self.users[np.minimum(at, self.users.size - 1)] == user)
        if known.any():
            r = at[known]
            first = np.searchsorted(self.key, 2.0 * r + x[known], side="right")
            last = self.end[r]
            left = last - first
            own = (self.cum[last] - self.cum[first]) / np.maximum(left, 1)
            mine = left >= MIN_SURVIVORS
            idx = np.flatnonzero(known)[mine]
            mean[idx] = own[mine]
        return np.minimum(np.maximum(mean * limit, np.asarray(elapsed_s, float)), limit)
