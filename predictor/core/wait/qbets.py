"""QBETS: binomial quantile bounds on queue wait (Nurmi, Brevik, Wolski 2007; spec "Peers").

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

from predictor.core.wait.history import KnownHistory, requested_procs, size_class
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


class QBETS:
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

    def fit(self, ctx: WaitContext) -> QBETS:
        if not (0 < self.q < 1 and 0 < self.confidence < 1):
            raise ValueError("q and confidence must lie in (0, 1)")
        self.n_min_ = min_history(self.q, self.confidence)
        self.r_trim_ = miss_run_to_trim(self.q, self.trim_alpha)
        self.timeline_key_: tuple[int, int] | None = None
        return self

    def _timeline(self, ctx: WaitContext) -> dict[str, Any]:
        """Replay every known job in start order, recording each group's state after it.

        The state after the c-th job of a group depends on that group's first c jobs only,
        so a target reads the entry of the last job known to it (no look-ahead).
        """
        key = (id(ctx.jobs), len(ctx.jobs))
        if self.timeline_key_ == key:
            return self.cache_
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
        self.cache_ = {"hist": hist, "state": state, "positions": positions}
        self.timeline_key_ = key
        return self.cache_

    def _answer(self, tl: dict[str, Any], groups: np.ndarray, prefix: np.ndarray) -> WaitPrediction:
        n = len(groups)
        upper, point = np.zeros(n), np.zeros(n)
        support = np.zeros(n, dtype=int)
        label = np.full(n, "no_history", dtype=object)
        pooled_pos = tl["positions"][POOLED]
        for g in range(N_GROUPS):
            sel = np.flatnonzero(groups == g)
            own = np.searchsorted(tl["positions"][g], prefix[sel]) - 1
            pool = np.searchsorted(pooled_pos, prefix[sel]) - 1
            own_ok = own >= 0
            own_state = tl["state"][g, tl["positions"][g][np.maximum(own, 0)]]
            pool_state = tl["state"][POOLED, pooled_pos[np.maximum(pool, 0)]]
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

    def predict(
        self, ctx: WaitContext, targets: np.ndarray, progress: Any = None
    ) -> WaitPrediction:
        targets = np.asarray(targets)
        tl = self._timeline(ctx)
        submit = ctx.jobs["submit_time"].to_numpy(dtype=float)[targets]
        prefix = tl["hist"].prefix(submit, targets)
        groups = size_class(requested_procs(ctx.jobs))[targets]
        return self._answer(tl, groups, prefix)

    def predict_at(self, ctx: WaitContext, procs: int, at_s: float) -> WaitPrediction:
        """Bound and point for a new job of ``procs`` processors submitted at ``at_s`` (API)."""
        tl = self._timeline(ctx)
        prefix = tl["hist"].prefix(np.array([at_s]))
        return self._answer(tl, size_class(np.array([procs])), prefix)
