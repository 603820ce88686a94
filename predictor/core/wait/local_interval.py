"""The wait interval from the errors of recent jobs predicted like the request (localised).

The interval of :mod:`predictor.core.wait.intervals` shifts one pool of errors ``e_j = y_j -
p_j`` by the request's prediction ``p``. Waits are zero for many jobs and a day for a few, so
that pool is as wide for a request predicted at a minute as for one predicted at a day. Here
the pool is local: for a request predicted ``p`` at instant ``t``,

1. the recent jobs: the last ``window`` jobs whose wait was known (that started) by ``t``,
   each predicted at its own arrival (``p_j``, wait ``y_j``);
2. its neighbours: the ``neighbours`` of them whose prediction is nearest ``p`` on a log
   scale, ``|log(1 + p_j) - log(1 + p)|`` (:func:`predictor.core.wait.p_within.nearest`,
   the jobs ``P(start within T)`` is read from);
3. the interval at level ``c'``: the narrowest run of ``ceil(c' (k + 1))`` consecutive values
   ``max(p + (y_j - p_j), 0)``, sorted (``intervals.shortest_run``): the neighbours' errors
   shifted by the request's prediction, so a request predicted short whose neighbours waited
   about what they were told gets a short interval;
4. ``c' = 1 - alpha_t``, adaptive conformal inference (Gibbs & Candes 2021) as in
   ``intervals``: ``alpha_t = (1 - c) + gamma sum_j ((1 - c) - miss_j)`` over the jobs known by
   ``t`` (from the ``min_pool``-th on), ``miss_j`` whether job ``j``'s own interval, made at
   its arrival, missed its wait. Neighbours are exchangeable only roughly (the neighbourhood
   is a window on the prediction, and the site drifts); the correction makes the long-run
   coverage hold whatever.

This is localised conformal prediction with the residual as its score (the weights are 1 on
the k nearest, 0 elsewhere; Guan 2023, "Localized conformal prediction", Biometrika). Fewer
known jobs than ``min_pool``: no interval (``[0, inf)``, as the pooled rule answers).

Stop 59 read the neighbours' waits themselves (``residual=False``). Their errors (stop 60)
gave a lower mean interval score on all three tuning parts at every level tried, with the
same k and window, and about the same on the test parts (lower on KTH-SP2 and CTC-SP2, higher
on SDSC-SP2 at 80-95%; docs/results.md "Stop 60"): where the request's prediction is not the
middle of its neighbours' (the longest predictions, whose neighbours are all predicted
shorter; a site with fewer than 200 told jobs), raw waits pull its interval towards theirs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from predictor.core.wait.intervals import check_level, known_order, shortest_run
from predictor.core.wait.metrics import WAIT_CLASS_LABELS, wait_class
from predictor.core.wait.p_within import NEIGHBOURS, WINDOW, nearest, shifted_errors

GAMMA = 0.002  # the adaptive step and the 30 chosen on the tuning parts for the pooled rule
MIN_POOL = 30
# A live site reads the rule over the jobs it told once this many have started (the fit's pool
# before; ``holdqueue.services.interval``): its first told jobs to start are the short waits.
# Chosen on new sites cut from the tuning parts (benchmarks/interval_small_pool.py, stop 61).
TOLD_FROM = 100
REPLAYED = WINDOW  # rows an answer at one instant replays (a site's told jobs, a trace's rows)


def level_words(target: float, level: float) -> str:
    """How the rule read its neighbours, in words: at ``target`` (the confidence ``level``
    corrected by the misses), or, once the misses have pushed ``target`` to 1 or past it,
    over all of them (the widest interval they give)."""
    if target >= 1.0:
        return (
            f"over all of them: the misses pushed the level from {level:g} to {target:.3f}, so "
            "the interval is the widest they give"
        )
    return f"at level {target:.3f} (the confidence {level:g} corrected by the misses)"


def scores(wait_s: np.ndarray, pred_s: np.ndarray, p: float, residual: bool) -> np.ndarray:
    """What the interval is read from for a request predicted ``p`` (``>= 0``), given its
    neighbours' waits and predictions: ``max(p + (y_j - p_j), 0)``, or with ``residual``
    False the waits ``y_j`` themselves (stop 59's rule)."""
    return shifted_errors(wait_s, pred_s, p) if residual else wait_s


def _run(waits: np.ndarray, level: float) -> tuple[float, float]:
    """The narrowest run of the sorted ``waits`` at ``level`` (clipped to [0, 1])."""
    return shortest_run(np.sort(waits), min(max(level, 0.0), 1.0))


@dataclass(frozen=True)
class LocalNow:
    """The rule's state at one instant: the recent jobs' predictions and waits (in arrival
    order) and the corrected level ``target``."""

    level: float
    pred_s: np.ndarray
    wait_s: np.ndarray
    target: float
    known: int
    k: int = NEIGHBOURS
    residual: bool = True

    def interval(self, pred_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(low_s, high_s)`` for predictions ``pred_s`` made now."""
        log_pool, rows = np.log1p(self.pred_s), np.arange(self.pred_s.size)
        runs = []
        for p in np.maximum(np.atleast_1d(np.asarray(pred_s, dtype=float)), 0.0).tolist():
            near = nearest(log_pool, rows, float(np.log1p(p)), self.k)
            values = scores(self.wait_s[near], self.pred_s[near], p, self.residual)
            runs.append(_run(values, self.target))
        low = np.array([max(lo, 0.0) for lo, _ in runs])
        return low, np.maximum(np.array([hi for _, hi in runs]), low)


def local_online(
    pred_s: np.ndarray,
    wait_s: np.ndarray,
    arrival_s: np.ndarray,
    known_s: np.ndarray,
    level: float,
    *,
    k: int = NEIGHBOURS,
    window: int = WINDOW,
    min_pool: int = MIN_POOL,
    gamma: float = GAMMA,
    residual: bool = True,
) -> tuple[np.ndarray, np.ndarray, float, int]:
    """Every row's interval at its own arrival (rows in arrival order), and the rule's
    corrected ``target`` and known count once every row is known.

    pred_s, wait_s, arrival_s, known_s : (n,) as ``intervals.online_intervals`` takes them
        (``wait_s[j]`` is read only once row ``j`` is known to a later arrival).
    Returns ``(low_s, high_s, target, known)``; a row answered before ``min_pool`` rows were
    known gets ``[0, inf)`` and does not miss.
    """
    low, high, target, added, _ = _online(pred_s, wait_s, arrival_s, known_s, level, k, window,
                                          min_pool, gamma, residual)  # fmt: skip
    return low, high, target, added


def _online(
    pred_s: np.ndarray,
    wait_s: np.ndarray,
    arrival_s: np.ndarray,
    known_s: np.ndarray,
    level: float,
    k: int,
    window: int,
    min_pool: int,
    gamma: float,
    residual: bool,
) -> tuple[np.ndarray, np.ndarray, float, int, np.ndarray]:
    """:func:`local_online`, and the rows in the order their waits became known."""
    level = check_level(level)
    pred = np.maximum(np.asarray(pred_s, dtype=float), 0.0)
    log_pred = np.log1p(pred)
    y = np.asarray(wait_s, dtype=float)
    order, count = known_order(arrival_s, known_s)
    n = pred.size
    low, high = np.zeros(n), np.full(n, np.inf)
    miss = np.zeros(n, dtype=bool)
    alpha, added = 1.0 - level, 0

    def feed(upto: int) -> None:
        nonlocal alpha, added
        for pos in range(added, upto):
            if pos + 1 >= min_pool:  # the pool holds min_pool once this row is in
                alpha += gamma * ((1.0 - level) - float(miss[order[pos]]))
        added = max(added, upto)

    for i in range(n):
        feed(int(count[i]))
        if added < min_pool:
            continue
        pool = order[max(added - window, 0) : added]  # rows: their arrival order breaks ties
        near = pool[nearest(log_pred[pool], pool, float(log_pred[i]), k)]
        lo, hi = _run(scores(y[near], pred[near], float(pred[i]), residual), 1.0 - alpha)
        low[i], high[i] = max(lo, 0.0), max(hi, lo, 0.0)
        miss[i] = not (low[i] <= y[i] <= high[i])
    feed(int(np.isfinite(np.asarray(known_s, dtype=float)).sum()))  # never known: not fed
    return low, high, 1.0 - alpha, added, order


def local_now(
    pred_s: np.ndarray,
    wait_s: np.ndarray,
    arrival_s: np.ndarray,
    known_s: np.ndarray,
    at_s: float,
    level: float,
    *,
    k: int = NEIGHBOURS,
    window: int = WINDOW,
    min_pool: int = MIN_POOL,
    gamma: float = GAMMA,
    residual: bool = True,
) -> LocalNow | None:
    """The rule's state at ``at_s`` over the rows (in arrival order) that arrived by then, or
    None while fewer than ``min_pool`` of them are known by ``at_s``. Rows known after ``at_s``
    are answered but their waits are not read."""
    known = np.asarray(known_s, dtype=float)
    seen = known <= at_s
    if int(seen.sum()) < min_pool:
        return None
    # a row not known by at_s is known "never" here: its miss cannot move the level yet
    known_here = np.where(seen, known, np.inf)
    _, _, target, n_known, order = _online(pred_s, wait_s, arrival_s, known_here, level, k,
                                           window, min_pool, gamma, residual)  # fmt: skip
    pool = np.sort(order[max(n_known - window, 0) : n_known])
    pred = np.maximum(np.asarray(pred_s, dtype=float), 0.0)
    wait = np.asarray(wait_s, dtype=float)
    return LocalNow(level, pred[pool], wait[pool], target, n_known, k, residual)


EVALUATION_LEVELS = (0.8, 0.9)


def interval_block(
    pred_s: np.ndarray, wait_s: np.ndarray, arrival_s: np.ndarray
) -> dict[str, dict[str, Any]]:
    """The evaluation's ``interval`` entry for one method's predictions of the targets: the
    rule of :func:`local_online` at each of :data:`EVALUATION_LEVELS`, the targets taken in
    arrival order, each one's wait known at ``arrival + wait``.

    Returns ``{"0.8": {"coverage", "mean_width_s", "uncalibrated", "by_prediction"}, "0.9":
    {...}}``: the coverage counts every target (an uncalibrated ``[0, inf)`` holds by
    construction), the mean width the calibrated ones (None when there are none: JSON has no
    NaN); ``by_prediction`` is ``{class label: {"jobs", "coverage"}}`` over the targets in each
    class of their *predicted* wait (``metrics.WAIT_CLASS_LABELS``): an interval should hold
    for the jobs told short and for those told long, not only on average.
    """
    wait = np.asarray(wait_s, dtype=float)
    arrival = np.asarray(arrival_s, dtype=float)
    order = np.argsort(arrival, kind="stable")
    pred, y, at = np.asarray(pred_s, dtype=float)[order], wait[order], arrival[order]
    out: dict[str, dict[str, Any]] = {}
    told = wait_class(np.maximum(pred, 0.0))
    for level in EVALUATION_LEVELS:
        low, high, _, _ = local_online(pred, y, at, at + y, level)
        cal = np.isfinite(high)
        hit = (y >= low) & (y <= high)
        out[f"{level:g}"] = {
            "coverage": float(hit.mean()) if y.size else None,
            "mean_width_s": float((high - low)[cal].mean()) if cal.any() else None,
            "uncalibrated": int((~cal).sum()),
            "by_prediction": {
                label: {
                    "jobs": int((told == c).sum()),
                    "coverage": float(hit[told == c].mean()) if (told == c).any() else None,
                }
                for c, label in enumerate(WAIT_CLASS_LABELS)
            },
        }
    return out
