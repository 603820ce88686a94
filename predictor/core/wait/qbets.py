"""QBETS: binomial quantile bounds on queue wait (Nurmi, Brevik, Wolski 2007; "Peers").

Per group of jobs (requested processors 1-4, 5-16, 17-64, 65+) the known waits are kept
sorted. With ``n`` of them, the upper bound of the ``q``-quantile at confidence ``C`` is the
``k``-th smallest wait for the smallest ``k`` with ``P[Binomial(n, q) <= k - 1] >= C``,
i.e. ``k - 1 = binom.ppf(C, n, q)`` (scipy evaluates the binomial tail through the regularised
incomplete beta function, which stays accurate for large ``n``). The bound exists only for
``n >= ln(1 - C) / ln(q)`` (59 for q = C = 0.95); below that the group borrows the pooled
history of all sizes, and with too little of that too, answers the largest known wait.

Change points: when a job's wait exceeds the bound its group had just before it became
known, that is a miss. After ``r`` consecutive misses with ``(1 - q)^r < 0.01`` the group's
history is trimmed to its most recent ``n_min`` jobs, so the bound follows a changed regime.

The point prediction (``wait_s``) is the 0.5-quantile of the same (trimmed) history and the
0.95 bound is ``upper_s``.
"""

from __future__ import annotations

import bisect
import math
from typing import Any

import numpy as np
from scipy.stats import binom

from predictor.core.wait.base import Progress, WaitEstimator
from predictor.core.wait.history import KnownHistory, requested_procs, size_class
from predictor.core.wait.targets import WaitTargets
from predictor.core.wait.types import WaitContext, WaitPrediction

N_GROUPS = 4
POOLED = N_GROUPS  # index of the all-sizes group


def bound_indices(n_max: int, q: float, confidence: float) -> np.ndarray:
    """``out[n]``: 0-based index into ``n`` sorted waits of the bound of the q-quantile.

    ``out[n] = binom.ppf(C, n, q)``, the smallest ``k - 1`` with ``P[Bin(n, q) <= k - 1] >= C``,
    computed for every ``n <= n_max`` in one vectorised call.
    """
    return binom.ppf(confidence, np.arange(n_max + 1), q).astype(np.int64)


def min_history(q: float, confidence: float) -> int:
    """Smallest ``n`` with ``q**n <= 1 - C``: ``ceil(ln(1 - C) / ln(q))``."""
    return math.ceil(math.log(1.0 - confidence) / math.log(q) - 1e-12)


def miss_run_to_trim(q: float, alpha: float = 0.01) -> int:
    """Smallest run length ``r`` of consecutive misses with ``(1 - q)^r < alpha``."""
    return math.floor(math.log(alpha) / math.log(1.0 - q)) + 1


class _Group:
    """One group's known waits: arrival order (for trimming) and sorted (for quantiles)."""

    def __init__(self, kidx: np.ndarray, n_min: int, r_trim: int) -> None:
        self.kidx, self.n_min, self.r_trim = kidx, n_min, r_trim
        self.recent: list[float] = []
        self.sorted: list[float] = []
        self.misses = 0

    def upper(self) -> float:
        n = len(self.sorted)
        if n < self.n_min:
            return self.sorted[-1] if n else 0.0
        return self.sorted[self.kidx[n]]

    def point(self) -> float:
        n = len(self.sorted)
        return self.sorted[max(math.ceil(0.5 * n) - 1, 0)] if n else 0.0

    def add(self, wait_s: float) -> None:
        if len(self.sorted) >= self.n_min:
            self.misses = self.misses + 1 if wait_s > self.upper() else 0
            if self.misses >= self.r_trim:
                self.recent = self.recent[-self.n_min :]
                self.sorted = sorted(self.recent)
                self.misses = 0
        self.recent.append(wait_s)
        bisect.insort(self.sorted, wait_s)


def _group_state(tl: dict[str, Any], g: int, prefix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(last known position of group g before each prefix, -1 if none; its state row)."""
    positions = tl["positions"][g]
    last = np.searchsorted(positions, prefix) - 1
    if positions.size == 0:
        return last, np.zeros((prefix.size, 3))
    return last, tl["state"][g, positions[np.maximum(last, 0)]]


class QBETS(WaitEstimator):
    """Binomial quantile-bound wait predictor, online over the known history.

    Parameters
    ----------
    q : quantile bounded by ``upper_s`` (0.95).
    confidence : confidence level C of the bound (0.95).
    trim_alpha : a run of ``r`` misses with ``(1 - q)^r < trim_alpha`` trims the history.
    """

    name = "qbets"

    def __init__(self, q: float = 0.95, confidence: float = 0.95, trim_alpha: float = 0.01) -> None:
        self.q = q
        self.confidence = confidence
        self.trim_alpha = trim_alpha

    def _learn(self, history: WaitContext) -> None:
        if not (0 < self.q < 1 and 0 < self.confidence < 1):
            raise ValueError("q and confidence must lie in (0, 1)")
        self.n_min_ = min_history(self.q, self.confidence)
        self.r_trim_ = miss_run_to_trim(self.q, self.trim_alpha)
        self.timeline_ = self._timeline(history)

    def _timeline(self, ctx: WaitContext) -> dict[str, Any]:
        """Replay every known job in start order, recording each group's state after it.

        The state after the c-th job of a group depends on that group's first c jobs only,
        so a target reads the entry of the last job known to it (no look-ahead).
        """
        hist = KnownHistory.from_jobs(ctx.jobs)
        cls = size_class(requested_procs(ctx.jobs))[hist.order]
        waits = ctx.jobs["wait_time"].to_numpy(dtype=float)[hist.order]
        m = len(waits)
        kidx = bound_indices(m, self.q, self.confidence)
        groups = [_Group(kidx, self.n_min_, self.r_trim_) for _ in range(5)]
        state = np.zeros((5, m, 3))  # per group, after position p: upper, point, n
        for p in range(m):
            for g in (cls[p], POOLED):
                groups[g].add(waits[p])
                state[g, p] = (groups[g].upper(), groups[g].point(), len(groups[g].sorted))
        positions = [np.flatnonzero(cls == g) for g in range(N_GROUPS)]
        positions.append(np.arange(m))
        return {"hist": hist, "state": state, "positions": positions}

    def _predict(self, targets: WaitTargets, progress: Progress) -> WaitPrediction:
        tl = self.timeline_
        prefix = tl["hist"].prefix(targets.known_at_s, targets.n_before)
        groups = size_class(targets.requests.procs)
        n = len(groups)
        upper, point = np.zeros(n), np.zeros(n)
        support = np.zeros(n, dtype=int)
        label = np.full(n, "no_history", dtype=object)
        for g in np.unique(groups):  # the groups asked about (one, for a single request)
            sel = np.flatnonzero(groups == g)
            own, own_state = _group_state(tl, g, prefix[sel])
            pool, pool_state = _group_state(tl, POOLED, prefix[sel])
            own_ok = own >= 0
            use_own = own_ok & (own_state[:, 2] >= self.n_min_)
            pick = np.where(use_own[:, None], own_state, pool_state)
            known = use_own | (pool >= 0)
            upper[sel] = np.where(known, pick[:, 0], 0.0)
            point[sel] = np.where(known, pick[:, 1], 0.0)
            support[sel] = np.where(known, pick[:, 2], 0).astype(int)
            enough = pick[:, 2] >= self.n_min_
            label[sel] = np.where(
                use_own,
                "group",
                np.where(known & enough, "pooled", np.where(known, "pooled_max", "no_history")),
            )
        return WaitPrediction(wait_s=point, predictor=label, support=support, upper_s=upper)
